//! Does a test fail with RHEAP exactly as it fails with MEMORY?
//!
//! The same copy of the suite runs twice, once with `$ENGINE = RHEAP` and once with
//! `$ENGINE = MEMORY`, and mysqltest leaves each failing test's output in a `.reject` beside
//! its `.result`. A test RHEAP fails *fails as MEMORY does* when MEMORY fails it too and the
//! two `.reject`s, each with its engine's name [normalised](normalise), are equal byte for
//! byte. Anything else (MEMORY passes or skips it, a `.reject` is missing, the two differ) is
//! a difference of RHEAP's own.

use super::outcome::Outcome;
use std::path::{Path, PathBuf};

/// What the engine under test is called in both outputs once normalised.
const CANONICAL: &[u8] = b"MEMORY";

/// The suite's mask for the engine under test (its `mask_engine.inc` and friends).
const MASK: &[u8] = b"<STORAGE_ENGINE>";

/// A `.reject` written with `engine` under test, as if written with MEMORY: every whole word
/// `engine` (not inside a longer identifier such as `RHEAP_X` or `ha_RHEAP`; case matters)
/// becomes `MEMORY`, and so does the suite's mask `<STORAGE_ENGINE>`. The mask goes too
/// because the suite masks whatever equals `$ENGINE`: a test that names MEMORY literally (as
/// `ALTER TABLE t1 ENGINE=MEMORY`) prints `MEMORY` with RHEAP under test but the mask with
/// MEMORY under test; once both the engine's name and the mask mean "the engine under
/// test", that line is the same. Works on bytes: the suite's output is not always UTF-8.
pub fn normalise(reject: &[u8], engine: &[u8]) -> Vec<u8> {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = Vec::with_capacity(reject.len());
    let mut i = 0;
    while i < reject.len() {
        let rest = &reject[i..];
        let whole = !engine.is_empty()
            && rest.starts_with(engine)
            && (i == 0 || !word(reject[i - 1]))
            && rest.get(engine.len()).is_none_or(|&b| !word(b));
        if whole {
            out.extend_from_slice(CANONICAL);
            i += engine.len();
        } else if rest.starts_with(MASK) {
            out.extend_from_slice(CANONICAL);
            i += MASK.len();
        } else {
            out.push(reject[i]);
            i += 1;
        }
    }
    out
}

/// How a test RHEAP failed compares with MEMORY's run of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Likeness {
    /// MEMORY failed it too, and the normalised `.reject`s are identical.
    Same,
    /// MEMORY did not fail it: it passed, was skipped, or has no outcome (`None`).
    MemoryDidNotFail(Option<Outcome>),
    /// A `.reject` is missing (a failure found after the test, in the server's log, or a
    /// crash); `true` for each side that has none.
    NoReject { rheap: bool, memory: bool },
    /// Both have a `.reject` and they differ, first at this line (1-based), shown on each
    /// side (empty when that side has ended).
    Differs {
        line: usize,
        rheap: String,
        memory: String,
    },
}

/// Sets RHEAP's `.reject` (`None`: there is none) against MEMORY's outcome and `.reject`;
/// the lines a difference shows are normalised ones.
pub fn likeness(
    rheap_reject: Option<&[u8]>,
    memory_outcome: Option<Outcome>,
    memory_reject: Option<&[u8]>,
) -> Likeness {
    if memory_outcome != Some(Outcome::Fail) {
        return Likeness::MemoryDidNotFail(memory_outcome);
    }
    let (Some(ours), Some(theirs)) = (rheap_reject, memory_reject) else {
        return Likeness::NoReject {
            rheap: rheap_reject.is_none(),
            memory: memory_reject.is_none(),
        };
    };
    let (ours, theirs) = (normalise(ours, b"RHEAP"), normalise(theirs, b"MEMORY"));
    if ours == theirs {
        return Likeness::Same;
    }
    let (mut a, mut b) = (ours.split(|&c| c == b'\n'), theirs.split(|&c| c == b'\n'));
    let mut line = 1;
    loop {
        match (a.next(), b.next()) {
            (Some(x), Some(y)) if x == y => line += 1,
            (x, y) => {
                return Likeness::Differs {
                    line,
                    rheap: shown(x.unwrap_or_default()),
                    memory: shown(y.unwrap_or_default()),
                }
            }
        }
    }
}

/// A line of output for a message: lossy UTF-8, at most 100 characters.
fn shown(line: &[u8]) -> String {
    let s = String::from_utf8_lossy(line);
    let s = s.trim_end_matches('\r');
    match s.char_indices().nth(100) {
        Some((cut, _)) => format!("{}...", &s[..cut]),
        None => s.to_string(),
    }
}

/// One failed test's comparison, with where both `.reject`s are (or would be).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comparison {
    pub likeness: Likeness,
    pub rheap_reject: PathBuf,
    pub memory_reject: PathBuf,
}

impl Comparison {
    /// Compares `test` (our name, e.g. `parts/alter_table`) between the two copies of the
    /// suite, given MEMORY's outcome for it. A `.reject` that cannot be read counts as
    /// missing.
    pub fn of(
        test: &str,
        rheap_copy: &Path,
        memory_copy: &Path,
        memory_outcome: Option<Outcome>,
    ) -> Comparison {
        let rheap_reject = reject_file(rheap_copy, test);
        let memory_reject = reject_file(memory_copy, test);
        let ours = std::fs::read(&rheap_reject).ok();
        let theirs = std::fs::read(&memory_reject).ok();
        Comparison {
            likeness: likeness(ours.as_deref(), memory_outcome, theirs.as_deref()),
            rheap_reject,
            memory_reject,
        }
    }

    /// Whether the test fails exactly as with MEMORY.
    pub fn same(&self) -> bool {
        self.likeness == Likeness::Same
    }

    /// How it differs from MEMORY, and where to look; `None` when it does not.
    pub fn difference(&self) -> Option<String> {
        let (r, m) = (self.rheap_reject.display(), self.memory_reject.display());
        let what = match &self.likeness {
            Likeness::Same => return None,
            Likeness::MemoryDidNotFail(Some(Outcome::Pass)) => {
                return Some(format!("MEMORY passes it (RHEAP's output: {r})"))
            }
            Likeness::MemoryDidNotFail(Some(Outcome::Skipped)) => {
                return Some(format!("MEMORY skips it (RHEAP's output: {r})"))
            }
            Likeness::MemoryDidNotFail(_) => {
                return Some(format!(
                    "MEMORY's run has no outcome for it (RHEAP's output: {r})"
                ))
            }
            Likeness::NoReject { rheap, memory } => {
                let who = match (rheap, memory) {
                    (true, true) => "neither run left a .reject",
                    (true, false) => "RHEAP's run left no .reject",
                    _ => "MEMORY's run left no .reject",
                };
                format!("{who} (see mtr's logs)")
            }
            Likeness::Differs {
                line,
                rheap,
                memory,
            } => format!("first at line {line}, normalised: RHEAP `{rheap}`, MEMORY `{memory}`"),
        };
        Some(format!("{what}; compare {r} with {m}"))
    }
}

/// Where mysqltest leaves `test`'s `.reject` in a copy of the suite.
pub fn reject_file(copy: &Path, test: &str) -> PathBuf {
    copy.join(format!("{test}.reject"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalise_replaces_the_whole_word_only() {
        let n = |s: &str| String::from_utf8(normalise(s.as_bytes(), b"RHEAP")).expect("utf-8");
        assert_eq!(n("ENGINE=RHEAP DEFAULT"), "ENGINE=MEMORY DEFAULT");
        assert_eq!(n("RHEAP"), "MEMORY");
        assert_eq!(n("'RHEAP','x'\tRHEAP\n"), "'MEMORY','x'\tMEMORY\n");
        assert_eq!(
            n("ha_RHEAP RHEAP_X XRHEAP RHEAP2"),
            "ha_RHEAP RHEAP_X XRHEAP RHEAP2"
        );
        assert_eq!(n("rheap Rheap"), "rheap Rheap", "case matters");
        assert_eq!(n("RHEAPRHEAP"), "RHEAPRHEAP");
    }

    #[test]
    fn normalise_unmasks_the_engine_under_test() {
        let n = |s: &str, e: &[u8]| String::from_utf8(normalise(s.as_bytes(), e)).expect("utf-8");
        assert_eq!(
            n(
                "ENGINE=<STORAGE_ENGINE>;ENGINE=RHEAP;ENGINE=MEMORY",
                b"RHEAP"
            ),
            "ENGINE=MEMORY;ENGINE=MEMORY;ENGINE=MEMORY"
        );
        assert_eq!(
            n("ENGINE=<STORAGE_ENGINE>;ENGINE=MyISAM", b"MEMORY"),
            "ENGINE=MEMORY;ENGINE=MyISAM"
        );
        assert_eq!(n("<storage_engine>", b"RHEAP"), "<storage_engine>");
    }

    #[test]
    fn normalise_keeps_bytes_that_are_not_utf8() {
        assert_eq!(normalise(b"\xff RHEAP \x00", b"RHEAP"), b"\xff MEMORY \x00");
    }

    #[test]
    fn a_literal_memory_matches_the_mask() {
        let l = likeness(
            Some(b"ALTER TABLE t1 ENGINE=MEMORY;\n) ENGINE=<STORAGE_ENGINE>\n"),
            Some(Outcome::Fail),
            Some(b"ALTER TABLE t1 ENGINE=<STORAGE_ENGINE>;\n) ENGINE=<STORAGE_ENGINE>\n"),
        );
        assert_eq!(l, Likeness::Same);
    }

    #[test]
    fn same_after_normalising() {
        let l = likeness(
            Some(b"CREATE TABLE t1 ENGINE=RHEAP;\nok\n"),
            Some(Outcome::Fail),
            Some(b"CREATE TABLE t1 ENGINE=MEMORY;\nok\n"),
        );
        assert_eq!(l, Likeness::Same);
    }

    #[test]
    fn memory_must_fail_too() {
        for o in [Some(Outcome::Pass), Some(Outcome::Skipped), None] {
            assert_eq!(
                likeness(Some(b"x"), o, Some(b"x")),
                Likeness::MemoryDidNotFail(o)
            );
        }
    }

    #[test]
    fn a_missing_reject_is_never_the_same() {
        let fail = Some(Outcome::Fail);
        assert_eq!(
            likeness(None, fail, None),
            Likeness::NoReject {
                rheap: true,
                memory: true
            }
        );
        assert_eq!(
            likeness(Some(b"x"), fail, None),
            Likeness::NoReject {
                rheap: false,
                memory: true
            }
        );
        assert_eq!(
            likeness(None, fail, Some(b"x")),
            Likeness::NoReject {
                rheap: true,
                memory: false
            }
        );
    }

    #[test]
    fn the_first_differing_line_is_found() {
        let fail = Some(Outcome::Fail);
        assert_eq!(
            likeness(Some(b"a\nb RHEAP\nc\n"), fail, Some(b"a\nb MEMORY\nd\n")),
            Likeness::Differs {
                line: 3,
                rheap: "c".into(),
                memory: "d".into()
            }
        );
        // One side is longer: the other shows as empty.
        assert_eq!(
            likeness(Some(b"a\n"), fail, Some(b"a\nmore\n")),
            Likeness::Differs {
                line: 2,
                rheap: "".into(),
                memory: "more".into()
            }
        );
        // Long lines are cut for the message.
        let long = "x".repeat(150);
        let Likeness::Differs { rheap, .. } = likeness(Some(long.as_bytes()), fail, Some(b"y"))
        else {
            panic!("they differ");
        };
        assert_eq!(rheap, format!("{}...", "x".repeat(100)));
    }

    #[test]
    fn comparison_reads_both_copies() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (r, m) = (dir.path().join("rheap"), dir.path().join("memory"));
        for d in [&r, &m] {
            std::fs::create_dir_all(d.join("parts")).expect("mkdir");
        }
        std::fs::write(r.join("parts/t.reject"), "ENGINE=RHEAP\n").expect("write");
        std::fs::write(m.join("parts/t.reject"), "ENGINE=MEMORY\n").expect("write");
        std::fs::write(r.join("u.reject"), "one\n").expect("write");
        std::fs::write(m.join("u.reject"), "two\n").expect("write");

        let c = Comparison::of("parts/t", &r, &m, Some(Outcome::Fail));
        assert!(c.same(), "{c:?}");
        assert_eq!(c.difference(), None);
        assert_eq!(c.rheap_reject, r.join("parts/t.reject"));

        let c = Comparison::of("u", &r, &m, Some(Outcome::Fail));
        let d = c.difference().expect("they differ");
        assert!(
            d.starts_with("first at line 1, normalised: RHEAP `one`, MEMORY `two`; compare "),
            "{d}"
        );
        assert!(d.contains(&m.join("u.reject").display().to_string()), "{d}");

        let c = Comparison::of("gone", &r, &m, Some(Outcome::Fail));
        let d = c.difference().expect("no rejects");
        assert!(d.starts_with("neither run left a .reject"), "{d}");

        let c = Comparison::of("u", &r, &m, Some(Outcome::Pass));
        let d = c.difference().expect("MEMORY passes");
        assert!(d.starts_with("MEMORY passes it"), "{d}");
    }
}
