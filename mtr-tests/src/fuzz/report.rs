//! What the fuzzer's modes share: the mode, a run's report and its mismatches, progress lines,
//! where mismatches' mtr cases go, and each case's generator.

use super::rng::Rng;
use rheap_harness::paths;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Which fuzzer runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Twin,
    Servers,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Twin => "twin",
            Mode::Servers => "servers",
        }
    }
}

/// One mismatch, shrunk.
#[derive(Debug, Clone)]
pub struct Mismatch {
    pub mode: Mode,
    pub seed: u64,
    pub case: u64,
    /// The statement whose answers differed.
    pub statement: String,
    /// What each side answered (stock or MEMORY first).
    pub want: String,
    pub got: String,
    /// The mtr test case written for it.
    pub script: PathBuf,
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct Report {
    pub mode: Mode,
    pub seed: u64,
    pub cases: u64,
    /// Statements sent, both sides counted.
    pub statements: u64,
    pub elapsed: Duration,
    pub mismatches: Vec<Mismatch>,
    /// Twin mode: statements both tables refused with "table is full" (compared like any
    /// other answer).
    pub both_full: Option<u64>,
}

impl Report {
    /// A run of `mode` from `seed` that has done nothing yet.
    pub fn new(mode: Mode, seed: u64) -> Report {
        Report {
            mode,
            seed,
            cases: 0,
            statements: 0,
            elapsed: Duration::ZERO,
            mismatches: Vec::new(),
            both_full: None,
        }
    }

    /// One line: statements run, statements per second, mismatches (and in twin mode the
    /// statements both tables found full).
    pub fn summary(&self) -> String {
        let full = self
            .both_full
            .map_or(String::new(), |n| format!(", {n} refused as full on both"));
        format!(
            "fuzz {} seed {}: {} cases, {} statements in {:.0?} ({:.0}/s){full}, {} mismatches",
            self.mode.name(),
            self.seed,
            self.cases,
            self.statements,
            self.elapsed,
            self.statements as f64 / self.elapsed.as_secs_f64().max(1e-9),
            self.mismatches.len()
        )
    }
}

/// Where mismatches' mtr cases are written.
pub(crate) fn out_dir() -> PathBuf {
    paths::target().join("fuzz")
}

/// The generator of case `case` of `seed`.
pub(crate) fn case_rng(seed: u64, case: u64) -> Rng {
    Rng::new(seed ^ case.wrapping_mul(0xA24B_AED4_963E_E407))
}

/// How long a mismatch may be shrunk.
pub(crate) const SHRINK_BUDGET: Duration = Duration::from_secs(60);

/// Prints a progress line at most every ten seconds.
pub(crate) struct Progress {
    started: Instant,
    last: Instant,
}

impl Progress {
    pub(crate) fn new() -> Progress {
        let now = Instant::now();
        Progress {
            started: now,
            last: now,
        }
    }

    pub(crate) fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    pub(crate) fn tick(&mut self, r: &Report) {
        if self.last.elapsed() >= Duration::from_secs(10) {
            self.last = Instant::now();
            let secs = self.started.elapsed().as_secs_f64();
            println!(
                "[fuzz {}] {secs:.0} s: {} cases, {} statements ({:.0}/s), {} mismatches",
                r.mode.name(),
                r.cases,
                r.statements,
                r.statements as f64 / secs.max(1e-9),
                r.mismatches.len()
            );
        }
    }
}
