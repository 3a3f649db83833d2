//! `mtr-tests/storage_engine.exceptions`: the storage_engine tests RHEAP is known to fail,
//! each with the reason in one line.
//!
//! Format: one test a line, `<test> <reason>`; the test is named as in the suite
//! (`alter_table`, or `parts/alter_table` and `trx/xa` for the two sub-suites). Blank lines
//! and lines starting with `#` are ignored. A line without a reason, a malformed name or a
//! test listed twice is an error (all of them are reported at once, with line numbers): the
//! format of [`crate::list_file`].
//!
//! A reason starting with [`MEMORY_TOO`] claims that the test fails exactly as it does with
//! ENGINE=MEMORY (the run checks the claim, see [`super::compare`]); any other reason names
//! a difference of RHEAP's own. A reason that starts like the marker but is not exactly it
//! (`MEMORY too` without the colon, another case), or has nothing after it, is an error too.

use crate::list_file;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::Path;

/// How a reason claims that the test fails exactly as with MEMORY.
pub const MEMORY_TOO: &str = "MEMORY too:";

/// The listed tests and why each fails.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Exceptions {
    reasons: BTreeMap<String, String>,
}

impl Exceptions {
    /// Reads and parses the file at `path`.
    pub fn load(path: &Path) -> Result<Exceptions> {
        let reasons = list_file::load(path, valid_name, marker_error)?;
        Ok(Exceptions { reasons })
    }

    /// Parses the file's text.
    pub fn parse(text: &str) -> Result<Exceptions> {
        let reasons = list_file::parse(text, valid_name, marker_error)?;
        Ok(Exceptions { reasons })
    }

    /// Whether `test` is listed.
    pub fn contains(&self, test: &str) -> bool {
        self.reasons.contains_key(test)
    }

    /// Why `test` is listed.
    pub fn reason(&self, test: &str) -> Option<&str> {
        self.reasons.get(test).map(String::as_str)
    }

    /// Whether `test` is listed as failing exactly as with MEMORY.
    pub fn claims_memory(&self, test: &str) -> bool {
        self.reason(test).is_some_and(|r| r.starts_with(MEMORY_TOO))
    }

    /// The listed tests, sorted.
    pub fn tests(&self) -> impl Iterator<Item = &str> {
        self.reasons.keys().map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.reasons.len()
    }

    pub fn is_empty(&self) -> bool {
        self.reasons.is_empty()
    }
}

/// What is wrong with a reason that looks like [`MEMORY_TOO`] without being it.
fn marker_error(reason: &str) -> Option<String> {
    let marker = MEMORY_TOO.trim_end_matches(':');
    let head = reason.get(..marker.len())?;
    let next = reason[marker.len()..].chars().next();
    if !head.eq_ignore_ascii_case(marker) || next.is_some_and(char::is_alphanumeric) {
        return None;
    }
    match reason.strip_prefix(MEMORY_TOO) {
        Some(rest) if rest.trim().is_empty() => Some(format!("nothing after `{MEMORY_TOO}`")),
        Some(_) => None,
        None => Some(format!("write the marker exactly as `{MEMORY_TOO}`")),
    }
}

/// `test` or `subsuite/test`, each part made of letters, digits, `_` and `-`.
fn valid_name(name: &str) -> bool {
    let part = |p: &str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    match name.split_once('/') {
        Some((dir, test)) => part(dir) && part(test),
        None => part(name),
    }
}

#[cfg(test)]
mod tests {
    use super::Exceptions;

    #[test]
    fn lines_comments_and_blanks() {
        let e = Exceptions::parse(
            "# why these fail\n\
             \n\
             index  needs indexes   \n\
             \t  parts/alter_table   needs partitioning # really\n",
        )
        .expect("valid file");
        assert_eq!(e.len(), 2);
        assert_eq!(e.reason("index"), Some("needs indexes"));
        assert_eq!(
            e.reason("parts/alter_table"),
            Some("needs partitioning # really")
        );
        assert!(!e.contains("alter_table"));
        assert_eq!(
            e.tests().collect::<Vec<_>>(),
            ["index", "parts/alter_table"]
        );
    }

    #[test]
    fn memory_too_is_a_claim_only_at_the_start() {
        let e = Exceptions::parse(
            "alter_table MEMORY too: output predates 10.11\n\
             index needs indexes; MEMORY too: not at the start\n\
             tbl_opt_ai the AUTO_INCREMENT option is lost\n",
        )
        .expect("valid file");
        assert!(e.claims_memory("alter_table"));
        assert!(!e.claims_memory("index"));
        assert!(!e.claims_memory("tbl_opt_ai"));
        assert!(!e.claims_memory("not_listed"));
    }

    #[test]
    fn a_misspelt_or_empty_memory_too_is_an_error() {
        let err = Exceptions::parse(
            "a MEMORY too no colon\n\
             b memory too: lower case\n\
             c MEMORY too:   \n\
             d MEMORY toolong is fine, it is not the marker\n\
             e MEMORY too: fine\n",
        )
        .expect_err("invalid file");
        let msg = format!("{err:#}");
        assert!(
            msg.contains("line 1: `a`: write the marker exactly"),
            "{msg}"
        );
        assert!(
            msg.contains("line 2: `b`: write the marker exactly"),
            "{msg}"
        );
        assert!(msg.contains("line 3: `c`: nothing after"), "{msg}");
        assert!(!msg.contains("line 4"), "{msg}");
        assert!(!msg.contains("line 5"), "{msg}");
    }

    #[test]
    fn empty_file_lists_nothing() {
        assert!(Exceptions::parse("").expect("empty is valid").is_empty());
        assert!(Exceptions::parse("# only a comment\n")
            .expect("comments only is valid")
            .is_empty());
    }

    #[test]
    fn every_error_is_reported_with_its_line() {
        let err = Exceptions::parse(
            "index needs indexes\n\
             lonely\n\
             index again\n\
             storage_engine.index qualified names are not ours\n\
             a/b/c too deep\n",
        )
        .expect_err("invalid file");
        let msg = format!("{err:#}");
        assert!(msg.contains("line 2: `lonely` has no reason"), "{msg}");
        assert!(msg.contains("line 3: `index` is listed twice"), "{msg}");
        assert!(
            msg.contains("line 4: `storage_engine.index` is not a test name"),
            "{msg}"
        );
        assert!(msg.contains("line 5: `a/b/c` is not a test name"), "{msg}");
    }
}
