//! One test's outcome in an mtr run, and every test's outcome from mtr's `(suite.test,
//! outcome)` pairs, under our names (shared by the comparison with MEMORY, the verdict and the
//! conformance run).

use std::collections::BTreeMap;

/// One test's outcome (mtr's `disabled` counts as skipped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    Fail,
    Skipped,
}

/// Every test's outcome, keyed by our test names, from mtr's `(suite.test, outcome)` pairs
/// (its report's, or its output lines' when it wrote no report).
///
/// `suites` pairs each `--suite=` value with the prefix of our names for its tests (`""` for
/// the top-level suite, `"parts/"` for a sub-suite). mtr's output may name a test twice (a
/// `pass` then a `fail` when the server log check finds errors after it): the last one wins.
pub fn outcomes<'a>(
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    suites: &[(String, String)],
) -> BTreeMap<String, Outcome> {
    let mut out = BTreeMap::new();
    for (name, outcome) in pairs {
        let outcome = match outcome {
            "pass" => Outcome::Pass,
            "fail" => Outcome::Fail,
            _ => Outcome::Skipped,
        };
        out.insert(test_name(name, suites), outcome);
    }
    out
}

/// mtr's `<suite>.<test>` as our name; a name from no known suite is kept whole.
fn test_name(mtr_name: &str, suites: &[(String, String)]) -> String {
    suites
        .iter()
        .find_map(|(suite, prefix)| {
            let test = mtr_name.strip_prefix(suite.as_str())?.strip_prefix('.')?;
            Some(format!("{prefix}{}", test.trim()))
        })
        .unwrap_or_else(|| mtr_name.to_string())
}
