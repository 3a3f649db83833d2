//! The list files of tests we accept an outcome for, each with its reason
//! (`mtr-tests/storage_engine.exceptions`, `mtr-tests/conformance.exceptions`): the line format
//! they share. Each file's own rules (what a test name looks like, what a reason must say) are
//! its reader's.
//!
//! Format: one test a line, `<test> <reason>`, the two separated by whitespace; the reason is
//! the rest of the line. Blank lines and lines starting with `#` are ignored. A malformed name,
//! a line without a reason, a reason its reader refuses, or a test listed twice is an error:
//! all of them are reported at once, with line numbers.

use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// Reads the file at `path` and [parses](parse) it.
pub fn load(
    path: &Path,
    valid_name: impl Fn(&str) -> bool,
    reason_error: impl Fn(&str) -> Option<String>,
) -> Result<BTreeMap<String, String>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    parse(&text, valid_name, reason_error).with_context(|| format!("in {}", path.display()))
}

/// Every test listed in `text` with its reason. A test for which `valid_name` is false, or
/// whose reason `reason_error` finds something wrong with (the error says what), is an
/// error, as are the other faults the [format](self) names.
pub fn parse(
    text: &str,
    valid_name: impl Fn(&str) -> bool,
    reason_error: impl Fn(&str) -> Option<String>,
) -> Result<BTreeMap<String, String>> {
    let mut reasons = BTreeMap::new();
    let mut errors = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let n = i + 1;
        let (test, reason) = match line.split_once(char::is_whitespace) {
            Some((t, r)) => (t, r.trim()),
            None => (line, ""),
        };
        if !valid_name(test) {
            errors.push(format!("line {n}: `{test}` is not a test name"));
        } else if reason.is_empty() {
            errors.push(format!("line {n}: `{test}` has no reason"));
        } else if let Some(e) = reason_error(reason) {
            errors.push(format!("line {n}: `{test}`: {e}"));
        } else if reasons
            .insert(test.to_string(), reason.to_string())
            .is_some()
        {
            errors.push(format!("line {n}: `{test}` is listed twice"));
        }
    }
    if !errors.is_empty() {
        bail!("{}", errors.join("; "));
    }
    Ok(reasons)
}

#[cfg(test)]
mod tests {
    use super::parse;

    fn plain(name: &str) -> bool {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    }

    #[test]
    fn entries_comments_and_blanks() {
        let r = parse(
            "# a comment\n\n  a   first reason  \n\tb\tsecond # not a comment\n",
            plain,
            |_| None,
        )
        .expect("valid");
        let got: Vec<(&str, &str)> = r.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            got,
            [("a", "first reason"), ("b", "second # not a comment")]
        );
    }

    #[test]
    fn every_error_is_reported_with_its_line() {
        let err = parse(
            "a fine\nlonely\na again\nno.dots allowed\nb refused here\n",
            plain,
            |r| {
                r.contains("refused")
                    .then(|| "a refused reason".to_string())
            },
        )
        .expect_err("invalid");
        let msg = format!("{err:#}");
        assert_eq!(
            msg,
            "line 2: `lonely` has no reason; line 3: `a` is listed twice; \
             line 4: `no.dots` is not a test name; line 5: `b`: a refused reason"
        );
    }

    #[test]
    fn a_missing_file_says_which() {
        let path = std::path::Path::new("/nonexistent/rheap/list");
        let err = super::load(path, plain, |_| None).expect_err("no such file");
        assert!(
            format!("{err:#}").starts_with("reading /nonexistent/rheap/list"),
            "{err:#}"
        );
    }
}
