//! What a step counted, and the report `cargo xtask` prints: one row per step, then the
//! `N passed, N failed, N skipped` line, always last.

use anyhow::Result;
use rheap_mtr_tests::mtr;

/// What one step counted.
pub struct Tally {
    pub name: String,
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
    pub notes: Vec<String>,
}

impl Tally {
    pub fn check(name: &str, ok: bool) -> Tally {
        Tally {
            name: name.into(),
            passed: usize::from(ok),
            failed: usize::from(!ok),
            skipped: 0,
            notes: vec![],
        }
    }

    pub fn mtr(name: &str, s: &mtr::Summary) -> Tally {
        let mut t = Tally {
            name: name.into(),
            passed: s.passed,
            failed: s.failed,
            skipped: s.skipped,
            notes: s.failures.clone(),
        };
        if !s.mtr_ok && s.failed == 0 {
            t.failed += 1;
            t.notes
                .push("mysql-test-run exited with an error (see its log under target/mtr)".into());
        }
        t
    }

    /// A step that failed, with the reason.
    pub fn failure(name: &str, e: &anyhow::Error) -> Tally {
        Tally {
            notes: vec![format!("{e:#}")],
            ..Tally::check(name, false)
        }
    }

    /// An mtr step, or one failure with the reason when it could not run at all.
    pub fn mtr_result(name: &str, r: Result<mtr::Summary>) -> Tally {
        match r {
            Ok(s) => Tally::mtr(name, &s),
            Err(e) => Tally::failure(name, &e),
        }
    }
}

/// A cargo test run (its success and output) as a step: its tests' counts, and a failure when
/// it failed before running any.
pub fn cargo_tally(name: &str, (ok, out): (bool, String)) -> Tally {
    let (passed, failed, skipped) = cargo_counts(&out);
    let mut t = Tally {
        name: name.into(),
        passed,
        failed,
        skipped,
        notes: vec![],
    };
    if !ok && failed == 0 {
        t.failed += 1;
        t.notes
            .push(format!("{name} failed before running tests (see above)"));
    }
    t
}

/// Sums cargo's `test result: ok. 3 passed; 0 failed; 1 ignored; ...` lines.
fn cargo_counts(out: &str) -> (usize, usize, usize) {
    let mut c = (0, 0, 0);
    for line in out.lines().filter(|l| l.starts_with("test result:")) {
        let num = |word: &str| -> usize {
            line.split(';')
                .find_map(|part| {
                    part.trim()
                        .strip_suffix(word)?
                        .trim()
                        .rsplit(' ')
                        .next()?
                        .parse()
                        .ok()
                })
                .unwrap_or(0)
        };
        c.0 += num("passed");
        c.1 += num("failed");
        c.2 += num("ignored");
    }
    c
}

/// The per-step table and, last, the `N passed, N failed` line; exits 1 when any failed
/// (directly, so that the count line stays the last line).
pub fn report(tallies: &[Tally]) {
    println!(
        "{:<40} {:>7} {:>7} {:>8}",
        "step", "passed", "failed", "skipped"
    );
    for t in tallies {
        println!(
            "{:<40} {:>7} {:>7} {:>8}",
            t.name, t.passed, t.failed, t.skipped
        );
        for n in &t.notes {
            println!("    failed: {n}");
        }
    }
    let passed: usize = tallies.iter().map(|t| t.passed).sum();
    let failed: usize = tallies.iter().map(|t| t.failed).sum();
    let skipped: usize = tallies.iter().map(|t| t.skipped).sum();
    println!("{passed} passed, {failed} failed, {skipped} skipped");
    if failed > 0 {
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cargo_counts_sum_every_result_line() {
        let out = "test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.1s\n\
                   noise\n\
                   test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 2s\n";
        assert_eq!(super::cargo_counts(out), (5, 1, 1));
    }
}
