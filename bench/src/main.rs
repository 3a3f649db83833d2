//! `rheap-bench`: the QPS benchmark (`ci/bench` runs it).
//!
//! ```text
//! rheap-bench [--full | --smoke] [--workload NAME]... [--system NAME]...
//!             [--clients 1,4,16] [--rounds N] [--cell-secs S] [--starts N]
//! rheap-bench --pool RESULTS.json RESULTS.json...
//! ```
//!
//! `--pool`: the acceptance lines over several runs' results (each run's `results.json`,
//! copied away before the next run writes its own), their rounds pooled as one run's
//! (`report::pool`): runs of the same command, for a ratio too close to a bound for one run.
//!
//! Default (quick, about 3 minutes): every workload, 1, 4 and 16 clients, 25 rounds of 0.05 s.
//! `--full`: 1, 4, 16 and 64 clients, 40 rounds of 0.25 s, over 4 starts of the servers.
//! `--starts N`: the rounds split over N processes of each server, restarted between them
//! (`run::Plan::starts`: what one process's luck adds to a ratio then averages out).
//! `--smoke`: one tiny round, checking that results agree and the report is written. Systems: `stock`, `rheap` (default both),
//! `rheap-off`, `rheap-b` (another build, from `RHEAP_B_PLUGIN_DIR`) and `stock-aria`; each at
//! tmp_table_size = max_heap_table_size = 16M and 16G.

use anyhow::{bail, Context, Result};
use mysql::prelude::Queryable;
use rheap_bench::report::{self, Cell, ClientsRow, ConfigResult, Report, WorkloadResult};
use rheap_bench::run::{self, Plan};
use rheap_bench::schema::Schema;
use rheap_bench::system::{self, Configuration, SIZES};
use rheap_bench::workload::{self, Workload};
use rheap_bench::{check, plot, probe};
use rheap_mtr_tests::paths;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The strace pass runs at most this many statements per workload and configuration.
const PROBE_STATEMENTS: usize = 73;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Quick,
    Full,
    Smoke,
}

struct Args {
    mode: Mode,
    workloads: Vec<Workload>,
    systems: Vec<String>,
    clients: Option<Vec<usize>>,
    rounds: Option<usize>,
    cell: Option<Duration>,
    starts: Option<usize>,
}

const USAGE: &str =
    "usage: rheap-bench [--full | --smoke] [--workload NAME]... [--system NAME]... \
                     [--clients 1,4,16] [--rounds N] [--cell-secs S] [--starts N]\n       \
                     rheap-bench --pool RESULTS.json RESULTS.json...";

fn parse_args() -> Result<Args> {
    let mut a = Args {
        mode: Mode::Quick,
        workloads: Vec::new(),
        systems: Vec::new(),
        clients: None,
        rounds: None,
        cell: None,
        starts: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || {
            it.next()
                .with_context(|| format!("{arg} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--full" => a.mode = Mode::Full,
            "--smoke" => a.mode = Mode::Smoke,
            "--workload" => a.workloads.push(workload::named(&value()?)?),
            "--system" => {
                let name = value()?;
                system::named(&name)?;
                a.systems.push(name);
            }
            "--clients" => {
                let list = value()?;
                a.clients = Some(
                    list.split(',')
                        .map(|c| c.trim().parse().context("--clients takes e.g. 1,4,16"))
                        .collect::<Result<_>>()?,
                );
            }
            "--rounds" => a.rounds = Some(value()?.parse().context("--rounds N")?),
            "--starts" => a.starts = Some(value()?.parse().context("--starts N")?),
            "--cell-secs" => {
                a.cell = Some(Duration::from_secs_f64(
                    value()?.parse().context("--cell-secs S")?,
                ))
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => bail!("unknown argument {other:?}\n{USAGE}"),
        }
    }
    Ok(a)
}

impl Args {
    fn plan(&self) -> Plan {
        let (clients, rounds, cell, warmup, starts) = match self.mode {
            // Many short rounds rather than a few long ones: the machine's speed moves in spells
            // of a tenth of a second or more, which longer cells do not average out, while
            // more rounds (each pairing configurations a few cells apart) do.
            Mode::Quick => (vec![1, 4, 16], 25, 0.05, 0.15, 1),
            Mode::Full => (vec![1, 4, 16, 64], 40, 0.25, 0.5, 4),
            Mode::Smoke => (vec![1], 1, 0.1, 0.0, 1),
        };
        Plan {
            workloads: if self.workloads.is_empty() {
                workload::ALL.to_vec()
            } else {
                self.workloads.clone()
            },
            clients: self.clients.clone().unwrap_or(clients),
            rounds: self.rounds.unwrap_or(rounds).max(1),
            cell: self.cell.unwrap_or(Duration::from_secs_f64(cell)),
            warmup: Duration::from_secs_f64(warmup),
            starts: self.starts.unwrap_or(starts),
        }
    }
}

fn main() {
    if let Err(e) = bench() {
        eprintln!("rheap-bench: {e:#}");
        std::process::exit(1);
    }
}

fn bench() -> Result<()> {
    let mut argv = std::env::args().skip(1);
    if argv.next().as_deref() == Some("--pool") {
        return pool(argv.map(PathBuf::from).collect());
    }
    let started = Instant::now();
    let args = parse_args()?;
    let plan = args.plan();
    let systems: Vec<_> = if args.systems.is_empty() {
        vec!["stock".to_string(), "rheap".to_string()]
    } else {
        args.systems.clone()
    };
    let schema = Schema::standard();
    let iterations: Vec<Arc<Vec<String>>> = plan
        .workloads
        .iter()
        .map(|w| Arc::new(w.iteration(&schema)))
        .collect();

    if systems.iter().any(|s| s.starts_with("rheap")) {
        eprintln!("building ha_rheap.so ...");
        rheap_mtr_tests::plugin::dir()?;
    }
    let n_configs = systems.len() * SIZES.len();
    eprintln!(
        "starting {n_configs} servers and loading {} tables into each ...",
        schema.tables.len()
    );
    let mut configs = start_all(&systems, &schema)?;
    let labels: Vec<String> = configs.iter().map(Configuration::label).collect();

    eprintln!(
        "[{:.0?}] checking that every statement returns the same result everywhere ...",
        started.elapsed()
    );
    let checks = check::check(&configs, &plan.workloads, &iterations)?;
    check::validate(&checks, &plan.workloads, &configs)?;
    let statements: usize = checks.iter().map(|c| c.statements).sum();
    eprintln!(
        "{statements} statements agree on {}; each makes the temp tables it should",
        labels.join(", ")
    );

    eprintln!(
        "[{:.0?}] measuring {} cells per round, {} rounds over {} start(s) of the servers \
         (about {:.0?}) ...",
        started.elapsed(),
        plan.cells_per_round(configs.len()),
        plan.rounds,
        plan.starts(),
        plan.estimate(configs.len())
    );
    let measured = run::run(&plan, &mut configs, &iterations)?;

    eprintln!(
        "[{:.0?}] counting mmap/munmap with strace ...",
        started.elapsed()
    );
    let probe_workloads: Vec<usize> = if args.mode == Mode::Smoke {
        // One workload is enough to show the probe works: the one rheap changes most.
        let i = plan
            .workloads
            .iter()
            .position(|w| w.name == workload::SHOW_INDEX.name);
        vec![i.unwrap_or(0)]
    } else {
        (0..plan.workloads.len()).collect()
    };
    let mut syscalls = vec![vec![None; configs.len()]; plan.workloads.len()];
    for &w in &probe_workloads {
        let stmts = &iterations[w][..iterations[w].len().min(PROBE_STATEMENTS)];
        for (c, config) in configs.iter().enumerate() {
            let s = probe::count(config, stmts)
                .with_context(|| format!("strace on {}", config.label()))?;
            syscalls[w][c] = Some(report::SyscallResult {
                mmap_per_statement: s.mmap as f64 / s.statements as f64,
                munmap_per_statement: s.munmap as f64 / s.statements as f64,
            });
        }
    }

    let report = build_report(&plan, &configs, &iterations, measured, syscalls, checks)?;
    let dir = if args.mode == Mode::Smoke {
        paths::target().join("bench/smoke")
    } else {
        paths::target().join("bench")
    };
    std::fs::create_dir_all(&dir)?;
    let json = dir.join("results.json");
    std::fs::write(&json, serde_json::to_string_pretty(&report)?)?;
    let svg = dir.join("qps.svg");
    plot::svg(&report, &svg)?;
    println!("{}", report.markdown());
    println!("Plot: {}\nJSON: {}", svg.display(), json.display());
    println!("({:.0?} in all)", started.elapsed());
    if args.mode == Mode::Smoke {
        for f in [&json, &svg] {
            let len = std::fs::metadata(f)?.len();
            if len == 0 {
                bail!("{} is empty", f.display());
            }
        }
        println!("(--smoke: results agree across systems and the report is written)");
    }
    Ok(())
}

/// `--pool`: the acceptance lines over the rounds of several runs' results.json, as if one run
/// had made them all (`report::pool`).
fn pool(paths: Vec<PathBuf>) -> Result<()> {
    if paths.len() < 2 {
        bail!("--pool needs two or more results.json files\n{USAGE}");
    }
    let runs = paths
        .iter()
        .map(|p| report::Saved::read(p))
        .collect::<Result<Vec<_>>>()?;
    let pooled = report::pool(&runs)?;
    println!(
        "{} runs pooled: {} rounds over {} starts of the servers.\n",
        runs.len(),
        pooled.method.rounds,
        pooled.method.starts
    );
    print!(
        "{}",
        report::acceptance_list(&report::acceptance(&pooled.workloads))
    );
    Ok(())
}

/// Every system at every size, started and loaded in parallel.
fn start_all(systems: &[String], schema: &Schema) -> Result<Vec<Configuration>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = systems
            .iter()
            .flat_map(|s| SIZES.iter().map(move |&size| (s, size)))
            .map(|(s, size)| {
                scope.spawn(move || {
                    let system = system::by_name(s).expect("checked when parsing");
                    Configuration::start(system, size, schema)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a start-up thread panicked"))
            .collect()
    })
}

fn build_report(
    plan: &Plan,
    configs: &[Configuration],
    iterations: &[Arc<Vec<String>>],
    measured: run::Measurements,
    syscalls: Vec<Vec<Option<report::SyscallResult>>>,
    checks: Vec<check::WorkloadCheck>,
) -> Result<Report> {
    let configurations: Vec<ConfigResult> = configs
        .iter()
        .map(|c| ConfigResult {
            label: c.label(),
            system: c.system.name().into(),
            size: c.size.0.into(),
            about: c.system.about().into(),
            peak_rss_bytes: c.peak_rss(),
        })
        .collect();
    let workloads = plan
        .workloads
        .iter()
        .enumerate()
        .map(|(w, wl)| {
            let per_iteration = iterations[w].len();
            let rows = plan
                .clients
                .iter()
                .enumerate()
                .map(|(k, &clients)| {
                    let cells: Vec<Cell> = measured.cells[w][k]
                        .iter()
                        .map(|s| {
                            let (median, spread) = run::median_spread(&s.stmt_per_s);
                            Cell {
                                stmt_per_s: median,
                                spread,
                                iter_per_s: median / per_iteration as f64,
                                rounds: s.stmt_per_s.clone(),
                            }
                        })
                        .collect();
                    ClientsRow {
                        clients,
                        ratios: report::ratios(&configurations, &cells, plan.starts()),
                        cells,
                    }
                })
                .collect();
            WorkloadResult {
                name: wl.name.into(),
                about: wl.about.into(),
                statements_per_iteration: per_iteration,
                syscalls: syscalls[w].clone(),
                rows,
            }
        })
        .collect();
    let server: Option<String> = configs[0].conn()?.query_first("SELECT VERSION()")?;
    Ok(Report {
        machine: machine(server.unwrap_or_default()),
        method: report::Method {
            rounds: plan.rounds,
            cell_seconds: plan.cell.as_secs_f64(),
            warmup_seconds: plan.warmup.as_secs_f64(),
            starts: plan.starts(),
            clients: plan.clients.clone(),
        },
        configurations,
        workloads,
        checks,
    })
}

fn machine(server: String) -> report::Machine {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        })
        .unwrap_or_else(|| "unknown OS".into());
    report::Machine {
        cpu,
        cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
        os,
        server: format!("MariaDB {server}"),
    }
}
