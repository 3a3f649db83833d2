//! The report: what ran where, the numbers per cell, the ratios, as JSON and as markdown.

use crate::check::WorkloadCheck;
use crate::system::Build;
use crate::workload::{
    BLOG_COUNT_DISTINCT, BLOG_DISTINCT, BLOG_FOUND_ROWS, BLOG_GROUP_BY_TEXT, BLOG_GROUP_CONCAT,
    BLOG_JSON_PAGE, BLOG_TOP_COMMENTS, BLOG_UNION, ORM_STARTUP, SHOW_FULL_COLUMNS,
};
use anyhow::{ensure, Context, Result};
use serde::{Deserialize, Serialize};
use std::fmt::Write;

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub machine: Machine,
    pub method: Method,
    pub configurations: Vec<ConfigResult>,
    pub workloads: Vec<WorkloadResult>,
    /// The correctness check that ran before the timed rounds.
    pub checks: Vec<WorkloadCheck>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub cpu: String,
    pub cores: usize,
    pub os: String,
    pub server: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Method {
    pub rounds: usize,
    pub cell_seconds: f64,
    pub warmup_seconds: f64,
    /// How many times each server was started for the timed rounds (`run::Plan::starts`).
    pub starts: usize,
    pub clients: Vec<usize>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConfigResult {
    pub label: String,
    pub system: String,
    /// tmp_table_size = max_heap_table_size.
    pub size: String,
    pub about: String,
    /// mariadbd's VmHWM at the end of the run.
    pub peak_rss_bytes: Option<u64>,
    /// The plugin build it ran (its plugin directory's build.json, or `{"build":"unknown"}`);
    /// absent for a system without a plugin of its own, and in results from before the record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<Build>,
}

/// `rheap: plain build of 3f86118`: a line per system that ran a plugin build, in order.
pub fn build_lines(configs: &[ConfigResult]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for c in configs {
        if let Some(b) = &c.build {
            if !seen.contains(&c.system.as_str()) {
                seen.push(&c.system);
                out.push(format!("{}: {b}", c.system));
            }
        }
    }
    out
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkloadResult {
    pub name: String,
    pub about: String,
    pub statements_per_iteration: usize,
    /// Per configuration, from the strace pass (None: not probed).
    pub syscalls: Vec<Option<SyscallResult>>,
    pub rows: Vec<ClientsRow>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct SyscallResult {
    pub mmap_per_statement: f64,
    pub munmap_per_statement: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClientsRow {
    pub clients: usize,
    /// Per configuration.
    pub cells: Vec<Cell>,
    pub ratios: Vec<Ratio>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    /// Median over the counted rounds.
    pub stmt_per_s: f64,
    /// (max − min) / median over the rounds.
    pub spread: f64,
    /// stmt_per_s / statements per iteration.
    pub iter_per_s: f64,
    pub rounds: Vec<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ratio {
    pub name: String,
    /// The ratio of the two cells' medians (the tables' ratio columns).
    pub value: f64,
    /// The median over the rounds of each round's own ratio. A round runs the two cells
    /// within seconds of each other, so the machine's drift from round to round, which moves
    /// both alike, cancels out of each round's ratio; the acceptance bounds use this one.
    pub paired: f64,
    /// A 95% confidence interval of `paired` ([`paired_interval`]).
    pub paired_95: [f64; 2],
}

/// The workloads whose 16-client, 16G numbers the acceptance bounds hold to.
pub const ACCEPTANCE_WORKLOADS: &[&str] = &[
    "show_index",
    "show_table_status",
    "group_by",
    "distinct",
    "derived_union",
];
pub const ACCEPTANCE_CLIENTS: usize = 16;

/// The workloads rheap must speed up, and by how much at least: rheap over stock at the same
/// size, at every size, and at every client count measured or only at the one named: the
/// information_schema tables with BLOB/TEXT columns, and a blog's tables with BLOB/TEXT/JSON
/// columns or a unique constraint, in memory instead of Aria (never slower, and twice as fast
/// at 16 clients where the statement is mostly its temporary table).
pub const SPEED_UP_WORKLOADS: &[(&str, f64, Option<usize>)] = &[
    (SHOW_FULL_COLUMNS.name, 3.0, None),
    (ORM_STARTUP.name, 2.0, None),
    (BLOG_FOUND_ROWS.name, 1.0, None),
    (BLOG_DISTINCT.name, 1.0, None),
    (BLOG_UNION.name, 1.0, None),
    (BLOG_GROUP_CONCAT.name, 1.0, None),
    (BLOG_JSON_PAGE.name, 1.0, None),
    (BLOG_TOP_COMMENTS.name, 1.0, None),
    (BLOG_COUNT_DISTINCT.name, 1.0, None),
    (BLOG_GROUP_BY_TEXT.name, 1.0, None),
    (BLOG_DISTINCT.name, 2.0, Some(16)),
    (BLOG_GROUP_CONCAT.name, 2.0, Some(16)),
    (BLOG_JSON_PAGE.name, 2.0, Some(16)),
    (BLOG_COUNT_DISTINCT.name, 2.0, Some(16)),
    (BLOG_GROUP_BY_TEXT.name, 2.0, Some(16)),
];

/// The ratios of one row: each other system over the first at the same size, each system's
/// largest size over its smallest, and each other system at the largest size over the first
/// system at the smallest. The rounds ran over `starts` starts of the servers.
pub fn ratios(configs: &[ConfigResult], cells: &[Cell], starts: usize) -> Vec<Ratio> {
    let mut systems: Vec<&str> = Vec::new();
    let mut sizes: Vec<&str> = Vec::new();
    for c in configs {
        if !systems.contains(&c.system.as_str()) {
            systems.push(&c.system);
        }
        if !sizes.contains(&c.size.as_str()) {
            sizes.push(&c.size);
        }
    }
    let at = |system: &str, size: &str| {
        configs
            .iter()
            .position(|c| c.system == system && c.size == size)
            .map(|i| &cells[i])
    };
    let mut out = Vec::new();
    let mut push = |name: String, num: Option<&Cell>, den: Option<&Cell>| {
        if let (Some(n), Some(d)) = (num, den) {
            if d.stmt_per_s > 0.0 {
                out.push(Ratio {
                    name,
                    value: n.stmt_per_s / d.stmt_per_s,
                    paired: paired_ratio(&n.rounds, &d.rounds),
                    paired_95: paired_interval(&n.rounds, &d.rounds, starts),
                });
            }
        }
    };
    let (Some(&base), Some(&small), Some(&large)) = (systems.first(), sizes.first(), sizes.last())
    else {
        return out;
    };
    for s in &systems[1..] {
        for z in &sizes {
            push(format!("{s}/{base} {z}"), at(s, z), at(base, z));
        }
    }
    if small != large {
        for s in &systems {
            push(format!("{s} {large}/{small}"), at(s, large), at(s, small));
        }
        for s in &systems[1..] {
            push(
                format!("{s} {large}/{base} {small}"),
                at(s, large),
                at(base, small),
            );
        }
    }
    out
}

/// The median of the rounds' own ratios `num[i] / den[i]` (rounds where either is missing or
/// `den` is 0 left out; 0 when none is left).
pub fn paired_ratio(num: &[f64], den: &[f64]) -> f64 {
    crate::run::median_spread(&per_round(num, den)).0
}

/// The rounds' own ratios (see [`paired_ratio`]).
fn per_round(num: &[f64], den: &[f64]) -> Vec<f64> {
    num.iter()
        .zip(den)
        .filter(|&(_, &d)| d > 0.0)
        .map(|(n, d)| n / d)
        .collect()
}

/// A 95% confidence interval of [`paired_ratio`], free of any assumption on the rounds' spread.
///
/// Rounds that all ran on the same server processes (`starts` = 1): with `n` ratios sorted,
/// the `j`-th from each end (counting from 1), where `j` = ⌊n/2 − 0.98·√n⌋ is the largest
/// count that a binomial(n, ½) falls below with at most 2.5% probability (its normal
/// approximation); the whole range for fewer than 6 ratios. Over several starts, the rounds of
/// one start share its processes' luck and are not independent: `start_bootstrap`.
pub fn paired_interval(num: &[f64], den: &[f64], starts: usize) -> [f64; 2] {
    if starts > 1 {
        return start_bootstrap(num, den, starts);
    }
    let mut v = per_round(num, den);
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return [0.0; 2];
    }
    let k = if n < 6 {
        0
    } else {
        let j = (n as f64 / 2.0 - 0.98 * (n as f64).sqrt()).floor().max(1.0) as usize;
        j - 1
    };
    [v[k], v[n - 1 - k]]
}

/// Resamples drawn by [`start_bootstrap`].
const RESAMPLES: usize = 2000;

/// The interval of [`paired_interval`] over `starts` starts (their rounds split as
/// [`crate::run::start_rounds`] does): a bootstrap that resamples whole starts. Each of
/// [`RESAMPLES`] resamples (seeded) draws `starts` starts with replacement and takes the median
/// of all their rounds' ratios; the interval is the 2.5th and 97.5th percentiles of those
/// medians.
fn start_bootstrap(num: &[f64], den: &[f64], starts: usize) -> [f64; 2] {
    let n = num.len().min(den.len());
    let groups: Vec<Vec<f64>> = (0..starts)
        .map(|s| {
            let r = crate::run::start_rounds(n, starts, s);
            per_round(&num[r.clone()], &den[r])
        })
        .collect();
    if groups.iter().all(Vec::is_empty) {
        return [0.0; 2];
    }
    let mut rng = crate::schema::Rng::new(0x5747_2b00_75ed);
    let mut medians: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let pooled: Vec<f64> = (0..starts)
                .flat_map(|_| &groups[rng.range(0, starts as u64 - 1) as usize])
                .copied()
                .collect();
            crate::run::median_spread(&pooled).0
        })
        .collect();
    medians.sort_by(f64::total_cmp);
    [
        medians[RESAMPLES * 25 / 1000],
        medians[RESAMPLES * 975 / 1000 - 1],
    ]
}

/// 37272.4 → "37,272".
pub fn thousands(x: f64) -> String {
    let digits = format!("{:.0}", x.max(0.0));
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn bold_best(values: &[f64], text: impl Fn(usize) -> String) -> Vec<String> {
    let best = values.iter().copied().fold(f64::MIN, f64::max);
    values
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            if v == best && values.len() > 1 {
                format!("**{}**", text(i))
            } else {
                text(i)
            }
        })
        .collect()
}

fn row(out: &mut String, cells: &[String]) {
    let _ = writeln!(out, "| {} |", cells.join(" | "));
}

fn header(out: &mut String, cells: &[String]) {
    row(out, cells);
    row(out, &vec!["---".to_string(); cells.len()]);
}

impl Report {
    fn labels(&self) -> Vec<String> {
        self.configurations
            .iter()
            .map(|c| c.label.clone())
            .collect()
    }

    /// The markdown the run prints: statements/s with ratios, iterations/s, system calls and
    /// peak RSS, the acceptance bounds.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let m = &self.method;
        let builds = build_lines(&self.configurations);
        if !builds.is_empty() {
            let _ = writeln!(out, "Plugin builds: {}.\n", builds.join("; "));
        }
        let _ = writeln!(
            out,
            "Statements/s, median of {} rounds of {:.2} s per cell (± half the range of the \
             rounds){}; best of each row in bold.\n",
            m.rounds,
            m.cell_seconds,
            if m.starts > 1 {
                format!(
                    ", each server restarted between {} runs of rounds",
                    m.starts
                )
            } else {
                String::new()
            }
        );
        let ratio_names: Vec<String> = self
            .workloads
            .first()
            .and_then(|w| w.rows.first())
            .map(|r| r.ratios.iter().map(|r| r.name.clone()).collect())
            .unwrap_or_default();
        let mut cols = vec!["workload".to_string(), "clients".to_string()];
        cols.extend(self.labels());
        cols.extend(ratio_names.iter().cloned());
        header(&mut out, &cols);
        for w in &self.workloads {
            for r in &w.rows {
                let values: Vec<f64> = r.cells.iter().map(|c| c.stmt_per_s).collect();
                let mut cells = vec![w.name.clone(), r.clients.to_string()];
                cells.extend(bold_best(&values, |i| {
                    let c = &r.cells[i];
                    format!("{} ±{:.0}%", thousands(c.stmt_per_s), c.spread * 50.0)
                }));
                cells.extend(r.ratios.iter().map(|x| format!("{:.2}", x.value)));
                row(&mut out, &cells);
            }
        }

        let _ = writeln!(out, "\nIterations/s (one statement or group per table: statements/s ÷ statements per iteration).\n");
        let mut cols = vec![
            "workload".to_string(),
            "stmts/iteration".to_string(),
            "clients".to_string(),
        ];
        cols.extend(self.labels());
        header(&mut out, &cols);
        for w in &self.workloads {
            for r in &w.rows {
                let values: Vec<f64> = r.cells.iter().map(|c| c.iter_per_s).collect();
                let mut cells = vec![
                    w.name.clone(),
                    w.statements_per_iteration.to_string(),
                    r.clients.to_string(),
                ];
                cells.extend(bold_best(&values, |i| format!("{:.1}", values[i])));
                row(&mut out, &cells);
            }
        }

        let _ = writeln!(
            out,
            "\nmmap + munmap per statement (strace on mariadbd, one client, one iteration, \
             outside the timed rounds) and mariadbd's peak RSS.\n"
        );
        let mut cols = vec!["workload".to_string()];
        cols.extend(self.labels());
        header(&mut out, &cols);
        for w in &self.workloads {
            let mut cells = vec![w.name.clone()];
            cells.extend(w.syscalls.iter().map(|s| match s {
                Some(s) => format!(
                    "{:.2} + {:.2}",
                    s.mmap_per_statement, s.munmap_per_statement
                ),
                None => "-".into(),
            }));
            row(&mut out, &cells);
        }
        let mut cells = vec!["peak RSS (MiB)".to_string()];
        cells.extend(self.configurations.iter().map(|c| match c.peak_rss_bytes {
            Some(b) => format!("{:.0}", b as f64 / (1 << 20) as f64),
            None => "-".into(),
        }));
        row(&mut out, &cells);

        let on_disk: Vec<&WorkloadCheck> = self
            .checks
            .iter()
            .filter(|c| c.disk_tmp_tables.iter().any(|&d| d > 0))
            .collect();
        if !on_disk.is_empty() {
            let _ = writeln!(
                out,
                "\nTemporary tables on disk per statement (`Created_tmp_disk_tables`, in the check \
                 before the timed rounds).\n"
            );
            let mut cols = vec!["workload".to_string()];
            cols.extend(self.labels());
            header(&mut out, &cols);
            for c in on_disk {
                let mut cells = vec![c.workload.to_string()];
                cells.extend(
                    c.disk_tmp_tables
                        .iter()
                        .map(|&d| format!("{:.2}", d as f64 / c.statements.max(1) as f64)),
                );
                row(&mut out, &cells);
            }
        }

        let acceptance = self.acceptance();
        if !acceptance.is_empty() {
            let _ = writeln!(
                out,
                "\nAcceptance at {ACCEPTANCE_CLIENTS} clients: rheap 16G ≥ stock 16M, and rheap 16G ≥ 0.97 × rheap 16M; \
                 at every size and client count, rheap ≥ 3 × stock on show_full_columns, ≥ 2 × \
                 stock on orm_startup and ≥ stock on the blog workloads, and ≥ 2 × stock at 16 \
                 clients on blog_distinct, blog_group_concat, blog_json_page, blog_count_distinct \
                 and blog_group_by_text. Each ratio is the median of the rounds' own ratios (the two cells of a round run \
                 at most a few cells apart), with its 95% confidence interval in parentheses; in \
                 brackets, the ratio of the medians, as in the table above. A bound holds when the \
                 whole interval is on its side, fails when the whole interval is on the other, and \
                 is inconclusive otherwise.\n"
            );
            out.push_str(&acceptance_list(&acceptance));
        }
        let _ = writeln!(
            out,
            "\nMachine: {}, {} cores, {}; {}.",
            self.machine.cpu, self.machine.cores, self.machine.os, self.machine.server
        );
        out
    }

    /// One line per acceptance workload measured at 16 clients with the configurations it
    /// needs: the two ratios and whether each bound holds.
    pub fn acceptance(&self) -> Vec<String> {
        acceptance(&self.workloads)
    }
}

/// Whether a bound holds on a ratio, from its 95% confidence interval: "holds" when the whole
/// interval is at or above the bound, "FAILS" when it is wholly below, and "inconclusive" when
/// it contains the bound (the rounds cannot tell; [`INCONCLUSIVE_HINT`] says what to do).
pub fn verdict(interval: [f64; 2], bound: f64) -> &'static str {
    if interval[0] >= bound {
        "holds"
    } else if interval[1] < bound {
        "FAILS"
    } else {
        "inconclusive"
    }
}

/// Printed after acceptance lines of which one or more is inconclusive.
pub const INCONCLUSIVE_HINT: &str = "An inconclusive line's interval contains its bound: this \
     run's rounds cannot tell on which side the ratio lies. For a conclusive answer, run the \
     workload with more rounds over more starts of the servers, e.g. `ci/bench --workload NAME \
     --clients 16 --rounds 600 --cell-secs 0.05 --starts 40` (about 3 minutes per workload), \
     or pool several runs with `rheap-bench --pool`.";

/// The acceptance lines as a markdown list, with [`INCONCLUSIVE_HINT`] when one needs it.
pub fn acceptance_list(lines: &[String]) -> String {
    let mut out: String = lines.iter().map(|l| format!("- {l}\n")).collect();
    if lines.iter().any(|l| l.contains("(inconclusive")) {
        out.push_str(&format!("\n{INCONCLUSIVE_HINT}\n"));
    }
    out
}

/// [`Report::acceptance`] of `workloads`.
pub fn acceptance(workloads: &[WorkloadResult]) -> Vec<String> {
    let mut out = Vec::new();
    for w in workloads {
        if !ACCEPTANCE_WORKLOADS.contains(&w.name.as_str()) {
            continue;
        }
        let Some(r) = w.rows.iter().find(|r| r.clients == ACCEPTANCE_CLIENTS) else {
            continue;
        };
        let get = |name: &str| r.ratios.iter().find(|x| x.name == name);
        if let (Some(vs_stock), Some(vs_small)) = (get("rheap 16G/stock 16M"), get("rheap 16G/16M"))
        {
            out.push(format!(
                "{}: rheap 16G / stock 16M = {:.3} ({:.3}–{:.3}) [{:.3}] ({}), \
                     rheap 16G / rheap 16M = {:.3} ({:.3}–{:.3}) [{:.3}] ({})",
                w.name,
                vs_stock.paired,
                vs_stock.paired_95[0],
                vs_stock.paired_95[1],
                vs_stock.value,
                verdict(vs_stock.paired_95, 1.0),
                vs_small.paired,
                vs_small.paired_95[0],
                vs_small.paired_95[1],
                vs_small.value,
                verdict(vs_small.paired_95, 0.97)
            ));
        }
    }
    for &(name, bound, clients) in SPEED_UP_WORKLOADS {
        let Some(w) = workloads.iter().find(|w| w.name == name) else {
            continue;
        };
        for r in w
            .rows
            .iter()
            .filter(|r| clients.is_none_or(|c| c == r.clients))
        {
            for x in r
                .ratios
                .iter()
                .filter(|x| x.name.starts_with("rheap/stock "))
            {
                out.push(format!(
                    "{}, {} clients: {} = {:.2} ({:.2}–{:.2}) [{:.2}] ({} ≥ {bound})",
                    w.name,
                    r.clients,
                    x.name,
                    x.paired,
                    x.paired_95[0],
                    x.paired_95[1],
                    x.value,
                    verdict(x.paired_95, bound),
                ));
            }
        }
    }
    out
}

/// What `--pool` reads of a run's results.json: its method, configurations and cells.
#[derive(Debug, Clone, Deserialize)]
pub struct Saved {
    pub method: Method,
    pub configurations: Vec<ConfigResult>,
    pub workloads: Vec<WorkloadResult>,
}

impl Saved {
    /// The results a run wrote to `path`.
    pub fn read(path: &std::path::Path) -> Result<Saved> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
    }
}

/// Several runs of the same plan as one: each cell's rounds put end to end, and every cell's
/// median and every ratio made again over them, with each run's starts kept apart in the
/// intervals. The runs must match in configurations, workloads and clients, and split their
/// rounds evenly over their starts, all with the same rounds per start: the pooled rounds then
/// split over the pooled starts exactly where each run's did (`run::start_rounds`).
pub fn pool(runs: &[Saved]) -> Result<Saved> {
    let first = runs.first().context("no run to pool")?;
    let labels =
        |r: &Saved| -> Vec<String> { r.configurations.iter().map(|c| c.label.clone()).collect() };
    let shape = |r: &Saved| -> Vec<(String, Vec<usize>)> {
        r.workloads
            .iter()
            .map(|w| (w.name.clone(), w.rows.iter().map(|r| r.clients).collect()))
            .collect()
    };
    let per_start = first.method.rounds / first.method.starts.max(1);
    for (i, r) in runs.iter().enumerate() {
        ensure!(
            labels(r) == labels(first) && shape(r) == shape(first),
            "run {} has other configurations, workloads or clients than run 1",
            i + 1
        );
        ensure!(
            r.method.starts > 0
                && r.method.rounds == per_start * r.method.starts
                && r.workloads
                    .iter()
                    .flat_map(|w| &w.rows)
                    .flat_map(|row| &row.cells)
                    .all(|c| c.rounds.len() == r.method.rounds),
            "run {} does not have {per_start} rounds in each start, as run 1 has",
            i + 1
        );
    }
    let mut out = first.clone();
    out.method.rounds = runs.iter().map(|r| r.method.rounds).sum();
    out.method.starts = runs.iter().map(|r| r.method.starts).sum();
    for (w, wl) in out.workloads.iter_mut().enumerate() {
        for (k, row) in wl.rows.iter_mut().enumerate() {
            for (c, cell) in row.cells.iter_mut().enumerate() {
                cell.rounds = runs
                    .iter()
                    .flat_map(|r| r.workloads[w].rows[k].cells[c].rounds.iter().copied())
                    .collect();
                let (median, spread) = crate::run::median_spread(&cell.rounds);
                cell.stmt_per_s = median;
                cell.spread = spread;
                cell.iter_per_s = median / wl.statements_per_iteration as f64;
            }
            row.ratios = ratios(&out.configurations, &row.cells, out.method.starts);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paired_ratios_are_the_median_of_each_rounds_ratio() {
        // Drift moves both alike: every round's ratio is 1.1, whatever the medians say.
        let num = [110.0, 220.0, 330.0, 440.0];
        let den = [100.0, 200.0, 300.0, 400.0];
        assert!((paired_ratio(&num, &den) - 1.1).abs() < 1e-12);
        assert_eq!(paired_ratio(&[2.0, 9.0], &[1.0, 0.0]), 2.0);
        assert_eq!(paired_ratio(&[], &[]), 0.0);
    }

    #[test]
    fn the_interval_brackets_the_median_by_order_statistics() {
        // 100 rounds with ratios 0.01, 0.02, ..., 1.00: j = ⌊50 − 9.8⌋ = 40, so the 40th
        // smallest and the 40th largest (the 61st smallest), as the usual tables give.
        let num: Vec<f64> = (1..=100).map(f64::from).collect();
        let den = vec![100.0; 100];
        let [lo, hi] = paired_interval(&num, &den, 1);
        assert!(
            (lo - 0.40).abs() < 1e-12 && (hi - 0.61).abs() < 1e-12,
            "{lo} {hi}"
        );
        let m = paired_ratio(&num, &den);
        assert!(lo <= m && m <= hi);
        // Few rounds: the whole range.
        assert_eq!(
            paired_interval(&[1.0, 3.0, 2.0], &[1.0, 1.0, 1.0], 1),
            [1.0, 3.0]
        );
        assert_eq!(paired_interval(&[], &[], 1), [0.0, 0.0]);
    }

    #[test]
    fn over_several_starts_the_interval_resamples_whole_starts() {
        // Four starts of 50 rounds; within each the ratios are alike (one start's luck), and
        // the starts differ: 0.96, 0.99, 1.01, 1.04. Rounds taken as independent would give a
        // narrow interval around 1; whole starts give one as wide as the starts' spread.
        let starts = [0.96, 0.99, 1.01, 1.04];
        let num: Vec<f64> = starts
            .iter()
            .flat_map(|&r| (0..50).map(move |i| r + f64::from(i) * 1e-5))
            .collect();
        let den = vec![1.0; num.len()];
        let [lo, hi] = paired_interval(&num, &den, 4);
        let [naive_lo, naive_hi] = paired_interval(&num, &den, 1);
        assert!(lo <= 0.97 && hi >= 1.03, "{lo} {hi}");
        assert!(lo < naive_lo && hi > naive_hi);
        let m = paired_ratio(&num, &den);
        assert!(lo <= m && m <= hi);
        assert_eq!(paired_interval(&num, &den, 4), [lo, hi], "seeded");
        assert_eq!(paired_interval(&[], &[], 4), [0.0, 0.0]);
    }

    /// [`fake`]'s report as `--pool` reads it, 2 starts of 2 rounds, rheap's cells × `rheap`.
    fn saved(rheap: f64) -> Saved {
        let r = fake();
        let mut s = Saved {
            method: Method {
                rounds: 4,
                starts: 2,
                ..r.method
            },
            configurations: r.configurations,
            workloads: r.workloads,
        };
        for w in &mut s.workloads {
            for row in &mut w.rows {
                for (c, cell) in row.cells.iter_mut().enumerate() {
                    let f = if c >= 2 { rheap } else { 1.0 };
                    let v = cell.stmt_per_s * f;
                    cell.rounds = vec![v * 0.98, v, v * 1.02, v * 1.01];
                }
            }
        }
        s
    }

    #[test]
    fn pooled_runs_are_one_run_of_all_their_rounds() {
        let ratio = |s: &Saved, name: &str| {
            let row = &s.workloads[0].rows[2];
            row.ratios.iter().find(|r| r.name == name).unwrap().paired
        };
        let (a, b) = (saved(1.0), saved(1.04));
        let same = pool(&[a.clone(), a.clone()]).unwrap();
        assert_eq!((same.method.rounds, same.method.starts), (8, 4));
        assert_eq!(same.workloads[0].rows[2].cells[3].rounds.len(), 8);
        let single = pool(std::slice::from_ref(&a)).unwrap();
        let name = "rheap 16G/stock 16M";
        assert_eq!(
            ratio(&same, name),
            ratio(&single, name),
            "a run pooled with itself"
        );
        // Pooled with a run where rheap is 4% faster: between the two.
        let mixed = pool(&[a.clone(), b.clone()]).unwrap();
        let (lo, hi) = (
            ratio(&single, name),
            ratio(&pool(std::slice::from_ref(&b)).unwrap(), name),
        );
        let m = ratio(&mixed, name);
        assert!(lo < m && m < hi, "{lo} < {m} < {hi}");
        let lines = acceptance(&mixed.workloads);
        let (bounds, speed_ups) = lines.split_at(ACCEPTANCE_WORKLOADS.len());
        assert!(bounds
            .iter()
            .zip(ACCEPTANCE_WORKLOADS)
            .all(|(l, w)| l.starts_with(w)));
        assert!(!speed_ups.is_empty());
        assert!(speed_ups
            .iter()
            .all(|l| SPEED_UP_WORKLOADS.iter().any(|(w, ..)| l.starts_with(w))));
    }

    #[test]
    fn a_bound_holds_or_fails_only_when_the_whole_interval_is_on_one_side() {
        assert_eq!(verdict([1.01, 1.05], 1.0), "holds");
        assert_eq!(verdict([1.0, 1.05], 1.0), "holds");
        assert_eq!(verdict([0.90, 0.99], 1.0), "FAILS");
        assert_eq!(verdict([0.94, 1.02], 1.0), "inconclusive");
        let lines = ["a: x = 0.982 (0.938–1.022) [0.98] (inconclusive)".to_string()];
        assert!(acceptance_list(&lines).contains(INCONCLUSIVE_HINT));
        let lines = ["a: x = 1.1 (1.05–1.2) [1.1] (holds)".to_string()];
        assert!(!acceptance_list(&lines).contains(INCONCLUSIVE_HINT));
    }

    #[test]
    fn runs_of_other_plans_are_not_pooled() {
        let a = saved(1.0);
        let mut other = a.clone();
        other.configurations[3].label = "rheap 64G".into();
        assert!(pool(&[a.clone(), other]).is_err(), "another configuration");
        let mut longer = a.clone();
        longer.method.rounds = 6;
        for cell in longer
            .workloads
            .iter_mut()
            .flat_map(|w| &mut w.rows)
            .flat_map(|r| &mut r.cells)
        {
            cell.rounds.extend([1.0, 1.0]);
        }
        assert!(
            pool(&[a.clone(), longer]).is_err(),
            "3 rounds per start, not 2"
        );
        assert!(pool(&[]).is_err());
    }

    #[test]
    fn the_builds_are_named_once_per_system_that_ran_a_plugin() {
        let mut configs = fake().configurations;
        let mut b = configs[2].clone();
        b.system = "rheap-b".into();
        b.label = "rheap-b 16M".into();
        b.build = Some(Build {
            build: "pgo".into(),
            commit: Some("abc1234ffff".into()),
            dirty: Some(true),
            features: Some(vec![]),
        });
        let mut old = b.clone();
        old.system = "rheap-off".into();
        old.build = Some(Build::unknown());
        configs.extend([b, old]);
        assert_eq!(
            build_lines(&configs),
            [
                "rheap: plain build of 3f86118",
                "rheap-b: pgo build of abc1234 (dirty)",
                "rheap-off: unknown build (no build.json)"
            ]
        );
        // Results from before the record read as without one.
        let mut v = serde_json::to_value(&configs[0]).unwrap();
        v.as_object_mut().unwrap().remove("build");
        let c: ConfigResult = serde_json::from_value(v).unwrap();
        assert_eq!(c.build, None);
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0.4), "0");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(37_272.4), "37,272");
        assert_eq!(thousands(1_234_567.0), "1,234,567");
    }

    /// A report with made-up numbers: the structure the real run prints.
    pub fn fake() -> Report {
        let configurations: Vec<ConfigResult> = [
            ("stock", "16M"),
            ("stock", "16G"),
            ("rheap", "16M"),
            ("rheap", "16G"),
        ]
        .iter()
        .enumerate()
        .map(|(i, (s, z))| ConfigResult {
            label: format!("{s} {z}"),
            system: s.to_string(),
            size: z.to_string(),
            about: format!("system {s}"),
            peak_rss_bytes: Some((100 + i as u64) << 20),
            build: (*s == "rheap").then(|| Build {
                build: "plain".into(),
                commit: Some("3f86118a9c".into()),
                dirty: Some(false),
                features: Some(vec![]),
            }),
        })
        .collect();
        let workloads = crate::workload::ALL
            .iter()
            .enumerate()
            .map(|(w, wl)| WorkloadResult {
                name: wl.name.into(),
                about: wl.about.into(),
                statements_per_iteration: 73,
                syscalls: (0..4)
                    .map(|c| {
                        Some(SyscallResult {
                            mmap_per_statement: (c % 2) as f64,
                            munmap_per_statement: (c % 2) as f64,
                        })
                    })
                    .collect(),
                rows: [1, 4, 16]
                    .iter()
                    .map(|&clients| {
                        let cells: Vec<Cell> = (0..4)
                            .map(|c| {
                                let v = 1000.0 * (w + 1) as f64 * clients as f64
                                    / (1 + c % 2) as f64
                                    + c as f64;
                                Cell {
                                    stmt_per_s: v,
                                    spread: 0.04,
                                    iter_per_s: v / 73.0,
                                    rounds: vec![v * 0.98, v, v * 1.02],
                                }
                            })
                            .collect();
                        ClientsRow {
                            clients,
                            ratios: ratios(&configurations, &cells, 2),
                            cells,
                        }
                    })
                    .collect(),
            })
            .collect();
        Report {
            machine: Machine {
                cpu: "CPU".into(),
                cores: 2,
                os: "OS".into(),
                server: "10.11.x".into(),
            },
            method: Method {
                rounds: 3,
                cell_seconds: 1.5,
                warmup_seconds: 0.3,
                starts: 2,
                clients: vec![1, 4, 16],
            },
            configurations,
            workloads,
            checks: vec![],
        }
    }

    /// The tables, columns and sections, with every number redacted.
    #[test]
    fn markdown_structure() {
        insta::with_settings!({filters => vec![(r"\d[\d,.]*(%|\b)", "N")]}, {
            insta::assert_snapshot!(fake().markdown());
        });
    }

    /// The JSON's shape: every key, with the numbers redacted.
    #[test]
    fn json_structure() {
        let mut v = serde_json::to_value(fake()).unwrap();
        redact_numbers(&mut v);
        // One workload and one row are enough to show the shape.
        let w = &mut v["workloads"];
        w.as_array_mut().unwrap().truncate(1);
        w[0]["rows"].as_array_mut().unwrap().truncate(1);
        insta::assert_json_snapshot!(v);
    }

    fn redact_numbers(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Number(_) => *v = serde_json::Value::String("[n]".into()),
            serde_json::Value::Array(a) => a.iter_mut().for_each(redact_numbers),
            serde_json::Value::Object(o) => o.values_mut().for_each(redact_numbers),
            _ => {}
        }
    }
}
