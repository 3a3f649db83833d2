//! The whole-suite conformance comparison (`cargo xtask conformance`): the installed upstream
//! `main` and `heap` suites, whole, run once on a stock server (no plugin) and once with the
//! plugin loaded as its package installs it (every setting at its default, so
//! `rheap_table_size_limit=ACTUAL` and `information_schema.RHEAP_TABLES` on) plus
//! `--rheap-takeover=ALL`, and every test whose outcome differs between the two runs. An
//! optional second plugin pass (`--table-size-limit HEAP` or `BOTH`) fills tables at MEMORY's
//! own row (`--rheap-table-size-limit=HEAP`), for the row-exact comparison.
//!
//! The passes run one after the other, each a [`mtr::Run`] of its own (its vardir, log and
//! report under `target/mtr/`[`STOCK_RUN`] and `target/mtr/`[`Limit::run_name`]). A test's
//! outcome is pass, fail or skipped (mtr's `disabled` counts as skipped); it *differs* when
//! the stock pass and a plugin pass give it different outcomes, or only one gives it one. A
//! test that fails on the stock server too does not differ.
//!
//! Each plugin pass also runs our `rheap_loaded` suite's [`GUARD`] test, which fails unless
//! RHEAP is loaded and serves MEMORY's tables: a pass without the plugin must not look like
//! conformance. It is left out of the comparison and checked on its own.
//!
//! The differences we accept are listed in `mtr-tests/conformance.exceptions` ([`Accepted`]),
//! each for every plugin pass or, with `[ACTUAL]` or `[HEAP]` before its reason, for that one;
//! a listed test that no longer differs in a pass it is listed for is a *stale* entry. The run
//! fails on a difference not listed, on a stale entry, on a guard that did not pass, and on a
//! pass mtr did not finish.

use crate::storage_engine::outcome::{self, Outcome};
use crate::storage_engine::verdict::Counts;
use crate::{list_file, mtr};
use anyhow::{Context, Result};
use rheap_harness::{paths, plugin};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The upstream suites compared, whole.
pub const SUITES: &[&str] = &["main", "heap"];

/// The stock pass's mtr run name (its directory under `target/mtr`).
pub const STOCK_RUN: &str = "conformance-stock";

/// `rheap_table_size_limit`: what makes a table full, in a plugin pass of the conformance run
/// and in the twin fuzzer's cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Limit {
    /// The package's default, `ACTUAL`: the pass runs with every setting at its default.
    Actual,
    /// `HEAP`: tables fill at MEMORY's own row, every other setting at its default.
    Heap,
}

impl Limit {
    /// The setting's value, as the exceptions' scope names it.
    pub fn name(self) -> &'static str {
        match self {
            Limit::Actual => "ACTUAL",
            Limit::Heap => "HEAP",
        }
    }

    /// The pass's label in the summary.
    pub fn label(self) -> &'static str {
        match self {
            Limit::Actual => "rheap",
            Limit::Heap => "rheap-heap",
        }
    }

    /// The pass's mtr run name (its directory under `target/mtr`).
    pub fn run_name(self) -> &'static str {
        match self {
            Limit::Actual => "conformance-rheap",
            Limit::Heap => "conformance-rheap-heap",
        }
    }

    /// The server options of the pass, after the plugin's loading and `rheap-takeover=ALL`.
    fn options(self) -> Vec<String> {
        match self {
            Limit::Actual => vec![],
            Limit::Heap => vec!["--loose-rheap-table-size-limit=HEAP".into()],
        }
    }

    fn parse_scope(word: &str) -> Option<Limit> {
        [Limit::Actual, Limit::Heap]
            .into_iter()
            .find(|l| word == format!("[{}]", l.name()))
    }
}

/// Our suite with the guard test, and the test: fails unless RHEAP is loaded and serving.
pub const GUARD: (&str, &str) = ("rheap_loaded", "loaded");

/// How many lines of a failure's diff (or, without a diff, of its report) the summary shows.
pub const DIFF_LINES: usize = 16;

/// The list of accepted differences.
pub fn list_file() -> PathBuf {
    paths::workspace().join("mtr-tests/conformance.exceptions")
}

/// Where the run writes every differing test's whole failure report, for reading.
pub fn differences_file() -> PathBuf {
    paths::target()
        .join("mtr")
        .join("conformance-differences.txt")
}

/// The differences we accept (`mtr-tests/conformance.exceptions`): tests named `suite.test`,
/// each with its reason, in the format of [`crate::list_file`]; a reason that starts with
/// `[ACTUAL]` or `[HEAP]` holds for that plugin pass only ([`Limit`]), any other for every
/// pass. An entry covers the test with every combination mtr runs it in (`main.t 'innodb'` is
/// `main.t`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Accepted {
    reasons: BTreeMap<String, String>,
}

/// A reason's scope: the pass its first word names, and the rest.
fn scope_of(reason: &str) -> (Option<Limit>, &str) {
    let (word, rest) = reason
        .split_once(char::is_whitespace)
        .unwrap_or((reason, ""));
    match Limit::parse_scope(word) {
        Some(limit) => (Some(limit), rest.trim()),
        None => (None, reason),
    }
}

/// What is wrong with a reason's scope, if anything.
fn scope_error(reason: &str) -> Option<String> {
    let word = reason.split_whitespace().next().unwrap_or("");
    match scope_of(reason) {
        (None, _) if word.starts_with('[') => Some(format!(
            "`{word}` is no pass: [ACTUAL] or [HEAP], or no scope for both"
        )),
        (Some(_), "") => Some("a scope and no reason".into()),
        _ => None,
    }
}

impl Accepted {
    /// Reads and parses the file at `path`.
    pub fn load(path: &Path) -> Result<Accepted> {
        let reasons = list_file::load(path, valid_name, scope_error)?;
        Ok(Accepted { reasons })
    }

    /// Parses the file's text.
    pub fn parse(text: &str) -> Result<Accepted> {
        let reasons = list_file::parse(text, valid_name, scope_error)?;
        Ok(Accepted { reasons })
    }

    /// The entries that hold for the plugin pass of `limit`, their reasons without the scope.
    pub fn for_pass(&self, limit: Limit) -> Accepted {
        let reasons = (self.reasons.iter())
            .filter_map(|(test, reason)| match scope_of(reason) {
                (Some(l), _) if l != limit => None,
                (_, reason) => Some((test.clone(), reason.to_string())),
            })
            .collect();
        Accepted { reasons }
    }

    /// Why the test mtr names `test` (with its combination, if any) may differ; `None` when
    /// it is not listed.
    pub fn reason(&self, test: &str) -> Option<&str> {
        self.reasons.get(base_name(test)).map(String::as_str)
    }

    /// The listed tests, sorted.
    pub fn tests(&self) -> impl Iterator<Item = &str> {
        self.reasons.keys().map(String::as_str)
    }

    /// How many tests are listed.
    pub fn len(&self) -> usize {
        self.reasons.len()
    }

    /// Whether no test is listed.
    pub fn is_empty(&self) -> bool {
        self.reasons.is_empty()
    }
}

/// `suite.test`, each part made of letters, digits, `_` and `-`.
fn valid_name(name: &str) -> bool {
    let part = |p: &str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    name.split_once('.')
        .is_some_and(|(suite, test)| part(suite) && part(test))
}

/// mtr's name of a test without its combination: `main.t 'innodb'` -> `main.t`.
pub fn base_name(test: &str) -> &str {
    test.split_once(' ').map_or(test, |(base, _)| base)
}

/// A test whose outcome differs between the passes (`None`: no outcome in that pass).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// mtr's name for it, with its combination if any.
    pub test: String,
    /// Its outcome on the stock server.
    pub stock: Option<Outcome>,
    /// Its outcome with the plugin and `--rheap-takeover=ALL`.
    pub rheap: Option<Outcome>,
}

/// Every test whose outcome in `stock` is not its outcome in `rheap`, sorted by name.
pub fn differences(
    stock: &BTreeMap<String, Outcome>,
    rheap: &BTreeMap<String, Outcome>,
) -> Vec<Difference> {
    let mut names: Vec<&String> = stock.keys().chain(rheap.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter_map(|test| {
            let (s, r) = (stock.get(test).copied(), rheap.get(test).copied());
            (s != r).then(|| Difference {
                test: test.clone(),
                stock: s,
                rheap: r,
            })
        })
        .collect()
}

/// The comparison sorted against the list.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Tests with the same outcome in both passes.
    pub same: usize,
    /// Differences the list accepts, each with its reason.
    pub held: Vec<(Difference, String)>,
    /// Differences the list does not name.
    pub unlisted: Vec<Difference>,
    /// Listed tests that no longer differ.
    pub stale: Vec<String>,
}

/// Compares the passes' outcomes and sorts the differences against `accepted`. With
/// `whole_run` every listed test that differs in neither pass is stale; a narrowed run (some
/// tests only) judges only the listed tests that have an outcome in either pass.
pub fn judge(
    stock: &BTreeMap<String, Outcome>,
    rheap: &BTreeMap<String, Outcome>,
    accepted: &Accepted,
    whole_run: bool,
) -> Verdict {
    let diffs = differences(stock, rheap);
    let mut v = Verdict {
        same: stock
            .iter()
            .filter(|(t, o)| rheap.get(*t) == Some(*o))
            .count(),
        ..Verdict::default()
    };
    for listed in accepted.tests() {
        let covers = |t: &String| base_name(t) == listed;
        let differs = diffs.iter().any(|d| covers(&d.test));
        let ran = stock.keys().chain(rheap.keys()).any(covers);
        if !differs && (whole_run || ran) {
            v.stale.push(listed.to_string());
        }
    }
    for d in diffs {
        match accepted.reason(&d.test) {
            Some(reason) => v.held.push((d, reason.to_string())),
            None => v.unlisted.push(d),
        }
    }
    v
}

impl Verdict {
    /// The last line's passes: tests with the same outcome, and accepted differences.
    pub fn passed(&self) -> usize {
        self.same + self.held.len()
    }

    /// The last line's failures: differences not listed, and stale entries.
    pub fn failed(&self) -> usize {
        self.unlisted.len() + self.stale.len()
    }
}

/// An outcome as the summary shows it.
pub fn shown(o: Option<Outcome>) -> &'static str {
    match o {
        Some(Outcome::Pass) => "pass",
        Some(Outcome::Fail) => "fail",
        Some(Outcome::Skipped) => "skipped",
        None => "no outcome",
    }
}

/// Each failed test's report in mtr's output `log` (what mtr prints after its `[ fail ]`
/// line: the diff of its result, or the error that stopped it, and any server log lines),
/// keyed by mtr's name for the test; a test named twice keeps its last failure.
pub fn failure_reports(log: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    let mut finish = |current: &mut Option<(String, String)>| {
        if let Some((test, text)) = current.take() {
            out.insert(test, text);
        }
    };
    for line in log.lines() {
        if let Some((test, outcome)) = mtr::outcome(line) {
            finish(&mut current);
            if outcome == "fail" {
                current = Some((test.to_string(), String::new()));
            }
            continue;
        }
        let Some((_, text)) = current.as_mut() else {
            continue;
        };
        let ends =
            line.starts_with(" - saving ") || (line.len() >= 10 && line.chars().all(|c| c == '-'));
        if ends {
            finish(&mut current);
        } else if !(line.starts_with("worker[") || line.trim_start().starts_with("Test ended at")) {
            text.push_str(line);
            text.push('\n');
        }
    }
    finish(&mut current);
    out
}

/// The first `n` lines of the unified diff in a failure `report`, from its `--- ` line. A
/// report without one (the test stopped on an error, or a server crashed) gives its first `n`
/// lines that say something: not blank, and not the server's start-up chatter that mtr
/// quotes from its log (its command line, `[Note]` and `[Warning]` lines, `Version:`).
pub fn diff_head(report: &str, n: usize) -> Vec<&str> {
    let lines: Vec<&str> = report.lines().collect();
    let start = lines
        .windows(2)
        .position(|w| w[0].starts_with("--- ") && w[1].starts_with("+++ "));
    match start {
        Some(i) => lines[i..].iter().take(n).copied().collect(),
        None => lines
            .into_iter()
            .filter(|l| !l.trim().is_empty() && !server_chatter(l))
            .take(n)
            .collect(),
    }
}

/// A line of a server's log that tells nothing about a failure: the command line mtr started
/// it with, a `[Note]` or `[Warning]` of its own, its `Version:` banner.
fn server_chatter(line: &str) -> bool {
    let logged = line.as_bytes().first().is_some_and(u8::is_ascii_digit)
        && (line.contains(" [Note] ") || line.contains(" [Warning] "));
    logged || line.starts_with("$ /") || line.starts_with("Version: '")
}

/// What one pass produced.
#[derive(Debug, Clone)]
pub struct Pass {
    /// `stock` or `rheap`.
    pub label: &'static str,
    /// Every test's outcome, by mtr's name for it.
    pub outcomes: BTreeMap<String, Outcome>,
    /// Each failed test's report from mtr's output ([`failure_reports`]).
    pub reports: BTreeMap<String, String>,
    /// Whether mtr wrote its report, i.e. got to the end.
    pub finished: bool,
    /// How long it took.
    pub took: Duration,
    /// mtr's whole output.
    pub log: PathBuf,
}

impl Pass {
    /// Its counts of passed, failed and skipped tests.
    pub fn counts(&self) -> Counts {
        Counts::of(&self.outcomes)
    }

    /// Its line of the summary.
    pub fn line(&self) -> String {
        let c = self.counts();
        format!(
            "{} pass: {} tests run: {} passed, {} failed, {} skipped (took {}; mtr's output: {})",
            self.label,
            self.outcomes.len(),
            c.passed,
            c.failed,
            c.skipped,
            minutes(self.took),
            self.log.display()
        )
    }
}

/// `9m 12s`.
pub fn minutes(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}m {:02}s", s / 60, s % 60)
}

/// Runs one pass, announcing its start and its end with the time it took; mtr's outcome
/// lines stream in between. The outcome of the test mtr names `guard`, if any, is taken out
/// of the pass's and returned beside it.
fn run_pass(
    label: &'static str,
    run: &mtr::Run,
    guard: Option<&str>,
    started: Instant,
) -> Result<(Pass, Option<Outcome>)> {
    println!(
        "\n==> conformance: {label} pass: suites {}, {} workers, vardir {} ({} so far)",
        run.suites.join(","),
        run.parallel,
        run.vardir.display(),
        minutes(started.elapsed())
    );
    let begun = Instant::now();
    let summary = run
        .run()
        .with_context(|| format!("the conformance run's {label} pass"))?;
    let took = begun.elapsed();
    let log = std::fs::read(&run.log).with_context(|| format!("reading {}", run.log.display()))?;
    let mut pass = Pass {
        label,
        outcomes: outcome::outcomes(summary.outcomes.iter().map(|(n, o)| (n.as_str(), *o)), &[]),
        reports: failure_reports(&String::from_utf8_lossy(&log)),
        finished: run.report.is_file(),
        took,
        log: run.log.clone(),
    };
    let guarded = guard.and_then(|g| pass.outcomes.remove(g));
    let c = pass.counts();
    println!(
        "==> conformance: {label} pass done in {}: {} tests, {} passed, {} failed, {} skipped",
        minutes(took),
        pass.outcomes.len(),
        c.passed,
        c.failed,
        c.skipped
    );
    Ok((pass, guarded))
}

/// One comparison's result: the stock pass against one plugin pass.
#[derive(Debug, Clone)]
pub struct Report {
    /// The stock server's pass.
    pub stock: Pass,
    /// The pass with the plugin and `--rheap-takeover=ALL`.
    pub rheap: Pass,
    /// What filled tables in the plugin pass.
    pub limit: Limit,
    /// The comparison sorted against the list.
    pub verdict: Verdict,
    /// The guard test's outcome in the plugin's pass.
    pub guard: Option<Outcome>,
    /// What fails the run besides the verdict's failures: the guard, an unfinished pass.
    pub problems: Vec<String>,
}

impl Report {
    /// Everything that failed: the verdict's failures and the problems.
    pub fn failed(&self) -> usize {
        self.verdict.failed() + self.problems.len()
    }

    /// Whether the run passes.
    pub fn ok(&self) -> bool {
        self.failed() == 0
    }

    /// The report of the pass in which `d` failed, if it failed in one (the plugin's first).
    fn failure_report(&self, d: &Difference) -> Option<(&'static str, Option<&str>)> {
        [(d.rheap, &self.rheap), (d.stock, &self.stock)]
            .into_iter()
            .find(|(o, _)| *o == Some(Outcome::Fail))
            .map(|(_, p)| (p.label, p.reports.get(&d.test).map(String::as_str)))
    }

    /// One difference, with the first lines of its failure's diff.
    fn describe(&self, d: &Difference, out: &mut String) {
        out.push_str(&format!(
            "  {}: stock {}, rheap {}\n",
            d.test,
            shown(d.stock),
            shown(d.rheap)
        ));
        match self.failure_report(d) {
            Some((label, Some(report))) => {
                for line in diff_head(report, DIFF_LINES) {
                    out.push_str(&format!("      | {line}\n"));
                }
                out.push_str(&format!("      (from the {label} pass)\n"));
            }
            Some((label, None)) => out.push_str(&format!(
                "      (no failure report in the {label} pass's output)\n"
            )),
            None => {}
        }
    }

    /// The summary: both passes' counts, the guard, the differences not listed (each with
    /// the first lines of its failure's diff), the listed ones that held, the stale entries,
    /// the problems; last, `N passed, N failed`.
    pub fn summary(&self) -> String {
        let v = &self.verdict;
        let mut out = format!(
            "\n==> conformance summary: stock against {} (rheap_table_size_limit={})\n",
            self.rheap.label,
            self.limit.name()
        );
        out.push_str(&format!("{}\n{}\n", self.stock.line(), self.rheap.line()));
        out.push_str(&format!(
            "guard {}.{} in the {} pass: {}\n",
            GUARD.0,
            GUARD.1,
            self.rheap.label,
            shown(self.guard)
        ));
        out.push_str(&format!(
            "{} tests with the same outcome in both passes; {} differ: {} not listed, {} listed\n",
            v.same,
            v.unlisted.len() + v.held.len(),
            v.unlisted.len(),
            v.held.len()
        ));
        out.push_str(&format!(
            "differences not listed in {}: {}\n",
            list_file().display(),
            v.unlisted.len()
        ));
        for d in &v.unlisted {
            self.describe(d, &mut out);
        }
        out.push_str(&format!("listed differences that held: {}\n", v.held.len()));
        for (d, reason) in &v.held {
            self.describe(d, &mut out);
            out.push_str(&format!("      listed: {reason}\n"));
        }
        out.push_str(&format!(
            "stale entries (listed, but the test no longer differs: delete them): {}\n",
            v.stale.len()
        ));
        for t in &v.stale {
            out.push_str(&format!("  {t}: {}\n", self.outcomes_of(t)));
        }
        for p in &self.problems {
            out.push_str(&format!("problem: {p}\n"));
        }
        if v.held.len() + v.unlisted.len() > 0 {
            out.push_str(&format!(
                "each difference's whole failure report: {}\n",
                differences_file().display()
            ));
        }
        out.push_str(&format!(
            "{}: {} passed, {} failed\n",
            self.rheap.label,
            v.passed(),
            self.failed()
        ));
        out
    }

    /// A listed test's outcomes in both passes (every combination of it).
    fn outcomes_of(&self, listed: &str) -> String {
        let of = |p: &Pass| -> Vec<String> {
            (p.outcomes.iter())
                .filter(|(t, _)| base_name(t) == listed)
                .map(|(t, o)| format!("{t} {}", shown(Some(*o))))
                .collect()
        };
        let (s, r) = (of(&self.stock), of(&self.rheap));
        if s.is_empty() && r.is_empty() {
            return "no outcome in either pass (no such test?)".into();
        }
        format!("stock: {}; rheap: {}", s.join(", "), r.join(", "))
    }

    /// Every difference's whole failure report, for reading.
    pub fn differences_text(&self) -> String {
        let v = &self.verdict;
        let diffs = (v.unlisted.iter().map(|d| (d, None)))
            .chain(v.held.iter().map(|(d, r)| (d, Some(r.as_str()))));
        let mut out = String::new();
        for (d, reason) in diffs {
            out.push_str(&format!(
                "==== {} ({} pass): stock {}, rheap {}; {}\n",
                d.test,
                self.rheap.label,
                shown(d.stock),
                shown(d.rheap),
                reason.map_or("not listed".into(), |r| format!("listed: {r}"))
            ));
            match self.failure_report(d) {
                Some((label, Some(r))) => out.push_str(&format!("({label} pass)\n{r}\n")),
                Some((label, None)) => out.push_str(&format!("({label} pass: no report)\n\n")),
                None => out.push('\n'),
            }
        }
        out
    }
}

/// Runs the stock pass and a plugin pass for each of `limits` over the whole suites (`extra`
/// goes to every mtr run after our arguments: test names narrow the run, options such as
/// `--big-test` widen it), compares each plugin pass with the stock one against the list,
/// prints each comparison's summary and last the line `N passed, N failed` over all of them,
/// and writes every difference's failure report to [`differences_file`].
pub fn run(limits: &[Limit], extra: &[String]) -> Result<Vec<Report>> {
    let started = Instant::now();
    let file = list_file();
    let accepted = Accepted::load(&file)?;
    let dir = plugin::dir()?;
    let loaded = mtr::our_suite(GUARD.0)?;
    let guard = format!("{loaded}.{}", GUARD.1);
    let narrowed = extra.iter().any(|a| !a.starts_with('-'));
    println!(
        "conformance: the whole {} suites on a stock server, then with {} loaded at its \
         package's defaults and --rheap-takeover=ALL, rheap_table_size_limit {}; {} accepted \
         differences in {}",
        SUITES.join(" and "),
        dir.join("ha_rheap.so").display(),
        limits
            .iter()
            .map(|l| l.name())
            .collect::<Vec<_>>()
            .join(", then "),
        accepted.len(),
        file.display()
    );

    let mut stock_run = mtr::Run::new(STOCK_RUN);
    stock_run.suites = SUITES.iter().map(|s| s.to_string()).collect();
    stock_run.tests = extra.to_vec();
    let (stock, _) = run_pass("stock", &stock_run, None, started)?;

    let mut reports = Vec::new();
    for &limit in limits {
        let mut run = mtr::Run::new(limit.run_name());
        run.suites = stock_run.suites.clone();
        run.suites.push(loaded.clone());
        run.tests = extra.to_vec();
        if narrowed {
            // Test names run those tests only: the guard too, then.
            run.tests.push(guard.clone());
        }
        // `loose-`: a test that restarts the server with --plugin-maturity=stable (which
        // refuses a GAMMA plugin) gets a server without rheap, as a user with that setting
        // does, rather than one that will not start; the guard proves the plugin is loaded
        // everywhere else.
        run.mysqld = vec![
            format!("--plugin-dir={}", dir.display()),
            "--plugin-load-add=ha_rheap.so".into(),
            "--loose-rheap-takeover=ALL".into(),
        ];
        run.mysqld.extend(limit.options());
        let (rheap, guard_outcome) = run_pass(limit.label(), &run, Some(&guard), started)?;
        let mut problems = Vec::new();
        if guard_outcome != Some(Outcome::Pass) {
            problems.push(format!(
                "the guard {}.{} did not pass in the {} pass ({}): RHEAP may not be loaded or \
                 serving, so that pass proves nothing",
                GUARD.0,
                GUARD.1,
                limit.label(),
                shown(guard_outcome)
            ));
        }
        // An unfinished stock pass is every comparison's: the first one reports it.
        let unfinished = [reports.is_empty().then_some(&stock), Some(&rheap)];
        for p in unfinished.into_iter().flatten().filter(|p| !p.finished) {
            problems.push(format!(
                "mysql-test-run stopped before the end of the {} pass (no report; see {})",
                p.label,
                p.log.display()
            ));
        }
        let verdict = judge(
            &stock.outcomes,
            &rheap.outcomes,
            &accepted.for_pass(limit),
            !narrowed,
        );
        reports.push(Report {
            stock: stock.clone(),
            rheap,
            limit,
            verdict,
            guard: guard_outcome,
            problems,
        });
    }
    let diffs = differences_file();
    let text: String = reports.iter().map(Report::differences_text).collect();
    std::fs::write(&diffs, text).with_context(|| format!("writing {}", diffs.display()))?;
    println!("conformance: took {} in all", minutes(started.elapsed()));
    for r in &reports {
        print!("{}", r.summary());
    }
    println!(
        "{} passed, {} failed",
        reports.iter().map(|r| r.verdict.passed()).sum::<usize>(),
        reports.iter().map(Report::failed).sum::<usize>()
    );
    Ok(reports)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcomes(list: &[(&str, Outcome)]) -> BTreeMap<String, Outcome> {
        list.iter().map(|(t, o)| (t.to_string(), *o)).collect()
    }

    fn diff(test: &str, stock: Option<Outcome>, rheap: Option<Outcome>) -> Difference {
        Difference {
            test: test.into(),
            stock,
            rheap,
        }
    }

    use Outcome::{Fail, Pass, Skipped};

    #[test]
    fn only_different_outcomes_differ() {
        let stock = outcomes(&[
            ("heap.heap", Pass),
            ("main.both_fail", Fail),
            ("main.both_skip", Skipped),
            ("main.fails", Pass),
            ("main.now_skips", Pass),
            ("main.now_runs", Skipped),
            ("main.fixed", Fail),
            ("main.stock_only", Pass),
            ("main.t 'innodb'", Pass),
            ("main.t 'myisam'", Pass),
        ]);
        let rheap = outcomes(&[
            ("heap.heap", Pass),
            ("main.both_fail", Fail),
            ("main.both_skip", Skipped),
            ("main.fails", Fail),
            ("main.now_skips", Skipped),
            ("main.now_runs", Pass),
            ("main.fixed", Pass),
            ("main.rheap_only", Skipped),
            ("main.t 'innodb'", Pass),
            ("main.t 'myisam'", Fail),
        ]);
        assert_eq!(
            differences(&stock, &rheap),
            [
                diff("main.fails", Some(Pass), Some(Fail)),
                diff("main.fixed", Some(Fail), Some(Pass)),
                diff("main.now_runs", Some(Skipped), Some(Pass)),
                diff("main.now_skips", Some(Pass), Some(Skipped)),
                diff("main.rheap_only", None, Some(Skipped)),
                diff("main.stock_only", Some(Pass), None),
                diff("main.t 'myisam'", Some(Pass), Some(Fail)),
            ]
        );
        assert!(differences(&stock, &stock).is_empty());
    }

    #[test]
    fn the_list_file_reads_suite_dot_test_and_a_reason() {
        let a = Accepted::parse(
            "# accepted\n\
             \n\
             main.show_check      SHOW ENGINES lists RHEAP\n\
             main.tmp_table_count-7586  the plugin's name in PLUGINS\n",
        )
        .expect("valid");
        assert_eq!(a.len(), 2);
        assert_eq!(
            a.reason("main.show_check"),
            Some("SHOW ENGINES lists RHEAP")
        );
        assert_eq!(
            a.reason("main.show_check 'innodb'"),
            Some("SHOW ENGINES lists RHEAP"),
            "an entry covers every combination"
        );
        assert_eq!(a.reason("main.show"), None);
        assert_eq!(
            a.tests().collect::<Vec<_>>(),
            ["main.show_check", "main.tmp_table_count-7586"]
        );
        assert!(Accepted::parse("# nothing\n").expect("valid").is_empty());

        let err = Accepted::parse(
            "show_check no suite\nmain.a\nmain.b why\nmain.b again\n.x why\nmain. why\n",
        )
        .expect_err("invalid");
        assert_eq!(
            format!("{err:#}"),
            "line 1: `show_check` is not a test name; line 2: `main.a` has no reason; \
             line 4: `main.b` is listed twice; line 5: `.x` is not a test name; \
             line 6: `main.` is not a test name"
        );
    }

    #[test]
    fn an_entry_holds_for_every_pass_or_the_one_its_scope_names() {
        let a = Accepted::parse(
            "main.both lists RHEAP_TABLES\n\
             main.actual [ACTUAL] fills at its real bytes\n\
             main.heap [HEAP] fills at MEMORY's row\n",
        )
        .expect("valid");
        let actual = a.for_pass(Limit::Actual);
        assert_eq!(
            actual.tests().collect::<Vec<_>>(),
            ["main.actual", "main.both"]
        );
        assert_eq!(
            actual.reason("main.actual"),
            Some("fills at its real bytes")
        );
        let heap = a.for_pass(Limit::Heap);
        assert_eq!(heap.tests().collect::<Vec<_>>(), ["main.both", "main.heap"]);
        assert_eq!(heap.reason("main.both"), Some("lists RHEAP_TABLES"));

        let err = Accepted::parse("main.a [BOTH] why\nmain.b [HEAP]\nmain.c [HEAP]  \n")
            .expect_err("invalid");
        assert_eq!(
            format!("{err:#}"),
            "line 1: `main.a`: `[BOTH]` is no pass: [ACTUAL] or [HEAP], or no scope for both; \
             line 2: `main.b`: a scope and no reason; line 3: `main.c`: a scope and no reason"
        );
        let err = Accepted::parse("main.d [HEAP] \t x\nmain.e [ACTUAL]\tx\n");
        assert!(err.is_ok(), "{err:?}");
    }

    #[test]
    fn the_checked_in_list_parses() {
        Accepted::load(&list_file()).expect("mtr-tests/conformance.exceptions is valid");
    }

    #[test]
    fn listed_differences_hold_others_fail_and_stale_entries_are_found() {
        let stock = outcomes(&[
            ("main.plugins", Pass),
            ("main.engines 'a'", Pass),
            ("main.engines 'b'", Pass),
            ("main.new", Pass),
            ("main.fixed_now", Pass),
            ("main.same", Fail),
        ]);
        let rheap = outcomes(&[
            ("main.plugins", Fail),
            ("main.engines 'a'", Fail),
            ("main.engines 'b'", Pass),
            ("main.new", Fail),
            ("main.fixed_now", Pass),
            ("main.same", Fail),
        ]);
        let accepted = Accepted::parse(
            "main.plugins lists RHEAP\n\
             main.engines lists RHEAP\n\
             main.fixed_now used to list RHEAP\n\
             main.gone no such test\n",
        )
        .expect("valid");
        let v = judge(&stock, &rheap, &accepted, true);
        assert_eq!(v.same, 3);
        assert_eq!(
            v.held,
            [
                (
                    diff("main.engines 'a'", Some(Pass), Some(Fail)),
                    "lists RHEAP".to_string()
                ),
                (
                    diff("main.plugins", Some(Pass), Some(Fail)),
                    "lists RHEAP".to_string()
                ),
            ]
        );
        assert_eq!(v.unlisted, [diff("main.new", Some(Pass), Some(Fail))]);
        assert_eq!(v.stale, ["main.fixed_now", "main.gone"]);
        assert_eq!((v.passed(), v.failed()), (5, 3));

        // Narrowed to some tests: a listed test that ran in neither pass is not judged.
        let v = judge(&stock, &rheap, &accepted, false);
        assert_eq!(v.stale, ["main.fixed_now"]);
    }

    #[test]
    fn nothing_differs_nothing_fails() {
        let both = outcomes(&[("main.a", Pass), ("main.b", Fail), ("heap.c", Skipped)]);
        let v = judge(&both, &both, &Accepted::default(), true);
        assert_eq!(
            v,
            Verdict {
                same: 3,
                ..Verdict::default()
            }
        );
        assert_eq!((v.passed(), v.failed()), (3, 0));
    }

    const LOG: &str = "\
worker[01] Using MTR_BUILD_THREAD 300, with reserved ports 19000..19029
main.a                                   w1 [ pass ]     12
main.show_check                          w2 [ fail ]
        Test ended at 2026-12-02 06:13:39

CURRENT_TEST: main.show_check
--- /usr/share/mysql/mysql-test/main/show_check.result\t2025-01-01 00:00:00
+++ /usr/share/mysql/mysql-test/main/show_check.reject\t2026-12-02 06:13:39
@@ -1,3 +1,4 @@
 Engine\tSupport
+RHEAP\tYES
 MEMORY\tYES
worker[02] mysql-test-run: WARNING: interleaved
mysqltest: Result length mismatch

 - saving '/v/log/main.show_check/' to '/v/log/main.show_check/'
main.b 'innodb'                          w1 [ pass ]      3
main.b 'innodb'                          w1 [ fail ]  Found warnings/errors in server log file!
        Test ended at 2026-12-02 06:13:40
line 1 of the warnings
main.c                                   w2 [ fail ]
        Test ended at 2026-12-02 06:13:41

CURRENT_TEST: main.c
mysqltest: At line 3: query 'x' failed: 1146: Table 'test.t' doesn't exist
--------------------------------------------------------------------------
The servers were restarted 0 times
";

    #[test]
    fn failure_reports_are_cut_out_of_mtrs_output() {
        let r = failure_reports(LOG);
        assert_eq!(
            r.keys().collect::<Vec<_>>(),
            ["main.b 'innodb'", "main.c", "main.show_check"]
        );
        assert_eq!(r["main.b 'innodb'"], "line 1 of the warnings\n");
        assert_eq!(
            r["main.c"],
            "\nCURRENT_TEST: main.c\n\
             mysqltest: At line 3: query 'x' failed: 1146: Table 'test.t' doesn't exist\n"
        );
        let show = &r["main.show_check"];
        assert!(
            show.starts_with("\nCURRENT_TEST: main.show_check\n--- "),
            "{show}"
        );
        assert!(
            show.ends_with("mysqltest: Result length mismatch\n\n"),
            "{show}"
        );
        assert!(!show.contains("worker["), "{show}");
    }

    #[test]
    fn the_diff_head_starts_at_the_diff() {
        let r = failure_reports(LOG);
        assert_eq!(
            diff_head(&r["main.show_check"], 4),
            [
                "--- /usr/share/mysql/mysql-test/main/show_check.result\t2025-01-01 00:00:00",
                "+++ /usr/share/mysql/mysql-test/main/show_check.reject\t2026-12-02 06:13:39",
                "@@ -1,3 +1,4 @@",
                " Engine\tSupport",
            ]
        );
        assert_eq!(
            diff_head(&r["main.c"], 16),
            [
                "CURRENT_TEST: main.c",
                "mysqltest: At line 3: query 'x' failed: 1146: Table 'test.t' doesn't exist",
            ]
        );
    }

    #[test]
    fn a_crash_report_shows_what_matters_first() {
        let report = "\nCURRENT_TEST: main.x\n\n\
            The server [mysqld.1 - pid: 1, winpid: 1, exit: 0] crashed while running \
            'check testcase before test'\n\
            Server log from this test:\n\
            ----------SERVER LOG START-----------\n\
            $ /usr/sbin/mariadbd --defaults-group-suffix=.1 --plugin-load-add=ha_rheap.so\n\
            2026-12-02  6:26:46 0 [Warning] Could not increase number of max_open_files\n\
            2026-12-02  6:26:46 0 [Note] Plugin 'InnoDB' is disabled.\n\
            2026-12-02  6:26:46 0 [ERROR] mariadbd got signal 11 ;\n\
            Version: '10.11.18-MariaDB-0+deb12u1-log'  socket: '/v/mysqld.1.sock'\n\
            Warning: Memory not freed: 4464\n\
            ----------SERVER LOG END-------------\n\
            mysqltest failed but provided no output\n";
        let log = format!("main.x w1 [ fail ]\n{report} - saving 'a' to 'b'\n");
        assert_eq!(failure_reports(&log)["main.x"], report);
        assert_eq!(
            diff_head(report, 16),
            [
                "CURRENT_TEST: main.x",
                "The server [mysqld.1 - pid: 1, winpid: 1, exit: 0] crashed while running \
                 'check testcase before test'",
                "Server log from this test:",
                "----------SERVER LOG START-----------",
                "2026-12-02  6:26:46 0 [ERROR] mariadbd got signal 11 ;",
                "Warning: Memory not freed: 4464",
                "----------SERVER LOG END-------------",
                "mysqltest failed but provided no output",
            ]
        );
    }

    fn pass(label: &'static str, outcomes: BTreeMap<String, Outcome>, log: &str) -> super::Pass {
        super::Pass {
            label,
            outcomes,
            reports: failure_reports(log),
            finished: true,
            took: Duration::from_secs(61),
            log: format!("/t/{label}.log").into(),
        }
    }

    #[test]
    fn the_summary_shows_each_difference_and_ends_with_the_counts() {
        let stock = outcomes(&[
            ("main.a", Pass),
            ("main.show_check", Pass),
            ("main.x", Fail),
        ]);
        let rheap = outcomes(&[
            ("main.a", Pass),
            ("main.show_check", Fail),
            ("main.x", Fail),
        ]);
        let accepted = Accepted::parse("main.a used to differ\n").expect("valid");
        let verdict = judge(&stock, &rheap, &accepted, true);
        let mut report = Report {
            stock: pass("stock", stock, ""),
            rheap: pass("rheap", rheap, LOG),
            limit: Limit::Actual,
            verdict,
            guard: Some(Pass),
            problems: vec![],
        };
        let summary = report.summary();
        let lines: Vec<&str> = summary.lines().collect();
        let stock_line = "stock pass: 3 tests run: 2 passed, 1 failed, 0 skipped \
                          (took 1m 01s; mtr's output: /t/stock.log)";
        assert!(lines.contains(&stock_line), "{summary}");
        assert!(
            lines.contains(&"  main.show_check: stock pass, rheap fail"),
            "{summary}"
        );
        assert!(lines.contains(&"      | +RHEAP\tYES"), "{summary}");
        assert!(
            lines.contains(&"  main.a: stock: main.a pass; rheap: main.a pass"),
            "{summary}"
        );
        assert_eq!(
            lines.last(),
            Some(&"rheap: 2 passed, 2 failed"),
            "{summary}"
        );
        assert!(!report.ok());

        // A guard that did not pass fails the run too.
        report.problems.push("the guard did not pass".into());
        assert_eq!(report.failed(), 3);
        assert!(report.differences_text().contains(
            "==== main.show_check (rheap pass): stock pass, rheap fail; not listed\n\
                 (rheap pass)\n"
        ));
    }

    #[test]
    fn base_names_drop_the_combination() {
        assert_eq!(base_name("main.t 'innodb,x'"), "main.t");
        assert_eq!(base_name("heap.heap"), "heap.heap");
        assert_eq!(minutes(Duration::from_secs(552)), "9m 12s");
    }
}
