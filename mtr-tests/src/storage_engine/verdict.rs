//! What a storage_engine run means: every test's outcome from mtr's log, set against the
//! exceptions file and against MEMORY's run of the same suite.
//!
//! The run passes iff every failing test is listed, every listed test fails, every test that
//! should have run did (with RHEAP and with MEMORY), and each listed test's reason tells the
//! truth about MEMORY: one listed as `MEMORY too:` fails exactly as MEMORY does, one listed
//! with another reason does not. A listed test that passes is a *stale exception*; one that
//! is skipped, or not in the suite at all, fails the run too, so the list stays honest.

use super::compare::Comparison;
use super::exceptions::{Exceptions, MEMORY_TOO};
use super::outcome::Outcome;
use std::collections::{BTreeMap, BTreeSet};

/// The name of our guard test in the suite's copy: it fails unless RHEAP is loaded
/// (`storage_engine.rs` writes it into the copy).
pub const GUARD: &str = "rheap_is_loaded";

/// Passed, failed and skipped tests of one run (mtr's `disabled` counts as skipped).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
}

impl Counts {
    pub fn of(outcomes: &BTreeMap<String, Outcome>) -> Counts {
        let mut c = Counts::default();
        for o in outcomes.values() {
            match o {
                Outcome::Pass => c.passed += 1,
                Outcome::Fail => c.failed += 1,
                Outcome::Skipped => c.skipped += 1,
            }
        }
        c
    }
}

/// The run, sorted into what is fine and what is not. Every list is sorted.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub passed: Vec<String>,
    pub skipped: Vec<String>,
    /// Failed, listed as `MEMORY too:`, and fails exactly as with MEMORY: expected.
    pub as_memory: Vec<String>,
    /// Failed, listed with a reason of RHEAP's own, and differs from MEMORY: expected.
    pub rheap_specific: Vec<String>,
    /// Failed without being listed.
    pub unlisted_failures: Vec<String>,
    /// Failed, listed as `MEMORY too:`, but not as MEMORY fails.
    pub claim_differs: Vec<String>,
    /// Failed, listed with a reason of RHEAP's own, yet exactly as MEMORY fails.
    pub claim_missing: Vec<String>,
    /// Listed, but passed.
    pub stale: Vec<String>,
    /// Listed, but skipped.
    pub listed_skipped: Vec<String>,
    /// Listed, but no such test in the suite.
    pub unknown: Vec<String>,
    /// Tests of the suite that should have run and have no outcome.
    pub not_run: Vec<String>,
    /// mysql-test-run exited with an error although no test failed.
    pub mtr_error: bool,
    /// Each failed test set against MEMORY's run (a failed test missing here counts as
    /// differing from MEMORY).
    pub comparisons: BTreeMap<String, Comparison>,
    /// MEMORY's run of the same copy: its counts ...
    pub memory: Counts,
    /// ... the tests of the suite that should have run there and have no outcome ...
    pub memory_not_run: Vec<String>,
    /// ... whether its guard test (the plugin is loaded) ran and did not pass ...
    pub memory_guard_failed: bool,
    /// ... and whether its mysql-test-run exited with an error although no test failed.
    pub memory_mtr_error: bool,
}

/// Sorts RHEAP's `outcomes` against `exceptions`, with each failed test's `comparisons`
/// with MEMORY. `suite_tests` are the suite's tests; with `whole_run` every one of them must
/// have an outcome (a run narrowed to some tests passes false, and listed tests that did not
/// run are then not judged).
pub fn compare(
    outcomes: &BTreeMap<String, Outcome>,
    exceptions: &Exceptions,
    suite_tests: &BTreeSet<String>,
    whole_run: bool,
    comparisons: BTreeMap<String, Comparison>,
) -> Verdict {
    let mut v = Verdict {
        comparisons,
        ..Verdict::default()
    };
    for (test, outcome) in outcomes {
        let listed = exceptions.contains(test);
        let list = match (outcome, listed) {
            (Outcome::Pass, false) => &mut v.passed,
            (Outcome::Pass, true) => &mut v.stale,
            (Outcome::Fail, false) => &mut v.unlisted_failures,
            (Outcome::Fail, true) => match (exceptions.claims_memory(test), v.same(test)) {
                (true, true) => &mut v.as_memory,
                (true, false) => &mut v.claim_differs,
                (false, true) => &mut v.claim_missing,
                (false, false) => &mut v.rheap_specific,
            },
            (Outcome::Skipped, false) => &mut v.skipped,
            (Outcome::Skipped, true) => &mut v.listed_skipped,
        };
        list.push(test.clone());
    }
    v.unknown = exceptions
        .tests()
        .filter(|t| !suite_tests.contains(*t))
        .map(String::from)
        .collect();
    if whole_run {
        v.not_run = missing(outcomes, suite_tests);
    }
    v
}

/// The tests of `suite_tests` without an outcome.
fn missing(outcomes: &BTreeMap<String, Outcome>, suite_tests: &BTreeSet<String>) -> Vec<String> {
    suite_tests
        .iter()
        .filter(|t| !outcomes.contains_key(*t))
        .cloned()
        .collect()
}

impl Verdict {
    /// Takes in MEMORY's run: its counts, and what must hold of it (with `whole_run`, every
    /// test has an outcome; the guard test, when it ran, passed).
    pub fn add_memory(
        &mut self,
        outcomes: &BTreeMap<String, Outcome>,
        suite_tests: &BTreeSet<String>,
        whole_run: bool,
        mtr_ok: bool,
    ) {
        self.memory = Counts::of(outcomes);
        if whole_run {
            self.memory_not_run = missing(outcomes, suite_tests);
        }
        self.memory_guard_failed = outcomes.get(GUARD).is_some_and(|o| *o != Outcome::Pass);
        self.memory_mtr_error = !mtr_ok;
    }

    /// Whether the failed `test` fails exactly as with MEMORY.
    pub fn same(&self, test: &str) -> bool {
        self.comparisons.get(test).is_some_and(Comparison::same)
    }

    /// How the failed `test` differs from MEMORY.
    fn difference(&self, test: &str) -> String {
        match self.comparisons.get(test) {
            Some(c) => c.difference().unwrap_or_else(|| "it does not".into()),
            None => "not compared with MEMORY".into(),
        }
    }

    /// Everything that fails the run, one line each, saying what to do.
    pub fn problems(&self) -> Vec<String> {
        let file = "mtr-tests/storage_engine.exceptions";
        let mut p = Vec::new();
        p.extend(self.unlisted_failures.iter().map(|t| {
            let how = if self.same(t) {
                format!("it fails exactly as MEMORY does: list it as `{MEMORY_TOO} <why>`")
            } else {
                format!("it differs from MEMORY: {}", self.difference(t))
            };
            format!("{t}: failed, and is not listed in {file} ({how})")
        }));
        p.extend(self.claim_differs.iter().map(|t| {
            format!(
                "{t}: listed as MEMORY too but differs from MEMORY: {}",
                self.difference(t)
            )
        }));
        p.extend(self.claim_missing.iter().map(|t| {
            format!(
                "{t}: listed as RHEAP-specific but fails exactly as MEMORY does \
                 (make its reason `{MEMORY_TOO} <why>`)"
            )
        }));
        p.extend(
            self.stale
                .iter()
                .map(|t| format!("{t}: stale exception, it passes now (remove it from {file})")),
        );
        p.extend(
            self.listed_skipped
                .iter()
                .map(|t| format!("{t}: listed in {file} but was skipped")),
        );
        p.extend(
            self.unknown
                .iter()
                .map(|t| format!("{t}: listed in {file} but the suite has no such test")),
        );
        p.extend(
            self.not_run
                .iter()
                .map(|t| format!("{t}: did not run (no outcome in mtr's output)")),
        );
        if self.mtr_error && self.failed() == 0 {
            p.push("mysql-test-run exited with an error (see its log under target/mtr)".into());
        }
        p.extend(
            self.memory_not_run
                .iter()
                .map(|t| format!("{t}: did not run with MEMORY (no outcome in mtr's output)")),
        );
        if self.memory_guard_failed {
            p.push(format!(
                "{GUARD}: did not pass in MEMORY's run, which must have the plugin loaded too"
            ));
        }
        if self.memory_mtr_error && self.memory.failed == 0 {
            p.push(
                "mysql-test-run exited with an error in MEMORY's run (see its log under \
                 target/mtr)"
                    .into(),
            );
        }
        p
    }

    /// Whether the run passes.
    pub fn ok(&self) -> bool {
        self.problems().is_empty()
    }

    /// Tests that failed, listed or not.
    pub fn failed(&self) -> usize {
        self.as_memory.len()
            + self.rheap_specific.len()
            + self.unlisted_failures.len()
            + self.claim_differs.len()
            + self.claim_missing.len()
    }

    /// Failed tests that fail exactly as with MEMORY, listed or not.
    pub fn failed_as_memory(&self) -> usize {
        self.as_memory.len()
            + self.claim_missing.len()
            + self
                .unlisted_failures
                .iter()
                .filter(|t| self.same(t))
                .count()
    }

    /// `storage_engine: N passed, N failed (N as MEMORY fails, N RHEAP-specific), N skipped`,
    /// the split of the failures being by comparison with MEMORY whether listed or not.
    /// Stale exceptions passed, and listed tests that were skipped were skipped.
    pub fn summary_line(&self) -> String {
        let same = self.failed_as_memory();
        format!(
            "storage_engine: {} passed, {} failed ({} as MEMORY fails, {} RHEAP-specific), \
             {} skipped",
            self.passed.len() + self.stale.len(),
            self.failed(),
            same,
            self.failed() - same,
            self.skipped.len() + self.listed_skipped.len(),
        )
    }

    /// `storage_engine with MEMORY: N passed, N failed, N skipped`.
    pub fn memory_line(&self) -> String {
        let m = &self.memory;
        format!(
            "storage_engine with MEMORY: {} passed, {} failed, {} skipped",
            m.passed, m.failed, m.skipped
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::compare::Likeness;
    use super::super::outcome::outcomes;
    use super::*;
    use crate::mtr;

    fn suites() -> Vec<(String, String)> {
        vec![
            ("/tmp/se/storage_engine".into(), String::new()),
            ("/tmp/se/storage_engine/parts".into(), "parts/".into()),
        ]
    }

    fn names(list: &[&str]) -> BTreeSet<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn outcomes_are_keyed_by_our_names_and_the_last_line_wins() {
        let log = "Logging: ...\n\
            /tmp/se/storage_engine.1st               w1 [ pass ]     12\n\
            /tmp/se/storage_engine/parts.alter_table w2 [ fail ]\n\
            /tmp/se/storage_engine.type_int          w1 [ disabled ]  MDEV-1 some reason\n\
            /tmp/se/storage_engine.insert            w2 [ skipped ]  Needs something\n\
            /tmp/se/storage_engine.misc              w1 [ pass ]      3\n\
            /tmp/se/storage_engine.misc              w1 [ fail ]  Found warnings/errors in server log file!\n\
            main.other                               w1 [ pass ]      1\n";
        let o = outcomes(log.lines().filter_map(mtr::outcome), &suites());
        let expect: BTreeMap<String, Outcome> = [
            ("1st", Outcome::Pass),
            ("parts/alter_table", Outcome::Fail),
            ("type_int", Outcome::Skipped),
            ("insert", Outcome::Skipped),
            ("misc", Outcome::Fail),
            ("main.other", Outcome::Pass),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        assert_eq!(o, expect);
    }

    fn outcomes_of(list: &[(&str, Outcome)]) -> BTreeMap<String, Outcome> {
        list.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    /// Comparisons with MEMORY: the tests in `same` fail as MEMORY does, those in `differ`
    /// do not (MEMORY passes them).
    fn with_memory(same: &[&str], differ: &[&str]) -> BTreeMap<String, Comparison> {
        let c = |t: &str, likeness| Comparison {
            likeness,
            rheap_reject: format!("/r/{t}.reject").into(),
            memory_reject: format!("/m/{t}.reject").into(),
        };
        let same = same.iter().map(|t| (t.to_string(), c(t, Likeness::Same)));
        let differ = differ.iter().map(|t| {
            let l = Likeness::MemoryDidNotFail(Some(Outcome::Pass));
            (t.to_string(), c(t, l))
        });
        same.chain(differ).collect()
    }

    #[test]
    fn listed_failures_are_expected_and_nothing_else_is() {
        let ex = Exceptions::parse(
            "index MEMORY too: no ordered index\n\
             parts/check MEMORY too: no CHECK\n\
             tbl_opt_ai the option is lost\n",
        )
        .expect("valid");
        let o = outcomes_of(&[
            ("1st", Outcome::Pass),
            ("index", Outcome::Fail),
            ("parts/check", Outcome::Fail),
            ("tbl_opt_ai", Outcome::Fail),
            ("lock", Outcome::Skipped),
        ]);
        let suite = names(&["1st", "index", "parts/check", "tbl_opt_ai", "lock"]);
        let cmp = with_memory(&["index", "parts/check"], &["tbl_opt_ai"]);
        let v = compare(&o, &ex, &suite, true, cmp);
        assert!(v.ok(), "{:?}", v.problems());
        assert_eq!(v.passed, ["1st"]);
        assert_eq!(v.as_memory, ["index", "parts/check"]);
        assert_eq!(v.rheap_specific, ["tbl_opt_ai"]);
        assert_eq!(v.skipped, ["lock"]);
        assert_eq!(
            v.summary_line(),
            "storage_engine: 1 passed, 3 failed (2 as MEMORY fails, 1 RHEAP-specific), 1 skipped"
        );
    }

    #[test]
    fn unlisted_failures_stale_skipped_unknown_and_missing_each_fail_the_run() {
        let ex = Exceptions::parse(
            "index needs indexes\nlock table locks\nghost no such test\ncheck needs check\n",
        )
        .expect("valid");
        let o = outcomes_of(&[
            ("1st", Outcome::Fail),
            ("index", Outcome::Pass),
            ("lock", Outcome::Skipped),
            ("check", Outcome::Fail),
        ]);
        let suite = names(&["1st", "index", "lock", "check", "update"]);
        let v = compare(&o, &ex, &suite, true, with_memory(&[], &["1st", "check"]));
        assert_eq!(v.unlisted_failures, ["1st"]);
        assert_eq!(v.stale, ["index"]);
        assert_eq!(v.listed_skipped, ["lock"]);
        assert_eq!(v.unknown, ["ghost"]);
        assert_eq!(v.not_run, ["update"]);
        assert_eq!(v.rheap_specific, ["check"]);
        let problems = v.problems();
        assert_eq!(problems.len(), 5, "{problems:?}");
        assert!(
            problems[0].starts_with("1st: failed, and is not listed")
                && problems[0].contains("it differs from MEMORY: MEMORY passes it"),
            "{problems:?}"
        );
        assert!(
            problems[1].starts_with("index: stale exception"),
            "{problems:?}"
        );
        assert!(!v.ok());
        assert_eq!(
            v.summary_line(),
            "storage_engine: 1 passed, 2 failed (0 as MEMORY fails, 2 RHEAP-specific), 1 skipped"
        );
    }

    #[test]
    fn reasons_must_tell_the_truth_about_memory() {
        let ex = Exceptions::parse(
            "claimed MEMORY too: said to fail as MEMORY\n\
             own a reason of RHEAP's own\n",
        )
        .expect("valid");
        let o = outcomes_of(&[
            ("claimed", Outcome::Fail),
            ("own", Outcome::Fail),
            ("new", Outcome::Fail),
        ]);
        let suite = names(&["claimed", "own", "new"]);
        let v = compare(
            &o,
            &ex,
            &suite,
            true,
            with_memory(&["own", "new"], &["claimed"]),
        );
        assert_eq!(v.claim_differs, ["claimed"]);
        assert_eq!(v.claim_missing, ["own"]);
        assert_eq!(v.unlisted_failures, ["new"]);
        let p = v.problems();
        assert_eq!(
            p,
            [
                "new: failed, and is not listed in mtr-tests/storage_engine.exceptions \
                 (it fails exactly as MEMORY does: list it as `MEMORY too: <why>`)",
                "claimed: listed as MEMORY too but differs from MEMORY: MEMORY passes it \
                 (RHEAP's output: /r/claimed.reject)",
                "own: listed as RHEAP-specific but fails exactly as MEMORY does \
                 (make its reason `MEMORY too: <why>`)",
            ]
        );
        assert_eq!(
            v.summary_line(),
            "storage_engine: 0 passed, 3 failed (2 as MEMORY fails, 1 RHEAP-specific), 0 skipped"
        );
    }

    #[test]
    fn a_failure_not_compared_differs_from_memory() {
        let ex = Exceptions::parse("t MEMORY too: whatever\n").expect("valid");
        let o = outcomes_of(&[("t", Outcome::Fail)]);
        let v = compare(&o, &ex, &names(&["t"]), true, BTreeMap::new());
        assert_eq!(v.claim_differs, ["t"]);
        assert!(v.problems()[0].ends_with("not compared with MEMORY"));
    }

    #[test]
    fn a_narrowed_run_judges_only_what_ran() {
        let ex = Exceptions::parse("index needs indexes\n").expect("valid");
        let o = outcomes_of(&[("1st", Outcome::Pass)]);
        let suite = names(&["1st", "index"]);
        let mut v = compare(&o, &ex, &suite, false, BTreeMap::new());
        v.add_memory(&o, &suite, false, true);
        assert!(v.ok(), "{:?}", v.problems());
        assert!(v.not_run.is_empty());
        assert!(v.memory_not_run.is_empty());
    }

    #[test]
    fn memory_counts_and_checks() {
        let suite = names(&[GUARD, "a", "b", "c"]);
        let memory = outcomes_of(&[
            (GUARD, Outcome::Pass),
            ("a", Outcome::Fail),
            ("b", Outcome::Skipped),
        ]);
        let mut v = Verdict::default();
        v.add_memory(&memory, &suite, true, false);
        assert_eq!(
            v.memory_line(),
            "storage_engine with MEMORY: 1 passed, 1 failed, 1 skipped"
        );
        assert_eq!(v.memory_not_run, ["c"]);
        assert_eq!(
            v.problems(),
            ["c: did not run with MEMORY (no outcome in mtr's output)"]
        );

        let memory = outcomes_of(&[(GUARD, Outcome::Fail)]);
        v.add_memory(&memory, &names(&[GUARD]), true, false);
        assert!(v.memory_guard_failed);
        assert_eq!(v.problems().len(), 1, "{:?}", v.problems());
        assert!(v.problems()[0].starts_with(GUARD), "{:?}", v.problems());

        v.add_memory(&BTreeMap::new(), &BTreeSet::new(), true, false);
        assert_eq!(
            v.problems(),
            ["mysql-test-run exited with an error in MEMORY's run (see its log under target/mtr)"]
        );
    }

    #[test]
    fn an_mtr_error_without_failed_tests_fails_the_run() {
        let v = Verdict {
            mtr_error: true,
            ..Verdict::default()
        };
        assert!(!v.ok());
        let v = Verdict {
            mtr_error: true,
            rheap_specific: vec!["index".into()],
            ..Verdict::default()
        };
        assert!(v.ok(), "mtr exits 1 whenever a test fails, listed or not");
    }
}
