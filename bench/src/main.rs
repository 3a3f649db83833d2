//! `rheap-bench`: the QPS benchmark (`ci/bench` runs it).
//!
//! ```text
//! rheap-bench [--full | --smoke] [--workload NAME]... [--system NAME]...
//!             [--clients 1,4,16] [--rounds N] [--cell-secs S] [--starts N]
//! rheap-bench --pool RESULTS.json RESULTS.json...
//! ```
//!
//! `--help` lists the workloads and systems there are, each with what it is, and every
//! option's default in each mode ([`Cli`]).
//!
//! `--pool` (anywhere on the line, with nothing but the files): the acceptance lines over
//! several runs' results (each run's `results.json`, copied away before the next run writes its
//! own), their rounds pooled as one run's (`report::pool`): runs of the same command, for a
//! ratio too close to a bound for one run.
//!
//! Default (quick, about 3 minutes): every workload, 1, 4 and 16 clients, 25 rounds of 0.05 s.
//! `--full`: 1, 4, 16 and 64 clients, 40 rounds of 0.25 s, over 4 starts of the servers.
//! `--starts N`: the rounds split over N processes of each server, restarted between them
//! (`run::Plan::starts`: what one process's luck adds to a ratio then averages out).
//! `--smoke`: one tiny round, checking that results agree and the report is written; not with
//! `--full`. Systems: `stock`, `rheap` (default both), `rheap-off`, `rheap-b` and `rheap-c`
//! (other builds, from `RHEAP_B_PLUGIN_DIR` and `RHEAP_C_PLUGIN_DIR`), `stock-aria` and `stock-tmpfs`; each at tmp_table_size = max_heap_table_size =
//! 16M and 16G. The header of the run and of its report names the plugin build each system ran
//! (`system::Build`: its plugin directory's build.json), and results.json records it.

use anyhow::{bail, Context, Result};
use clap::{CommandFactory, Parser};
use mysql::prelude::Queryable;
use rheap_bench::report::{self, Cell, ClientsRow, ConfigResult, Report, WorkloadResult};
use rheap_bench::run::{self, Plan};
use rheap_bench::schema::Schema;
use rheap_bench::system::{self, Configuration, SIZES};
use rheap_bench::workload::{self, Workload};
use rheap_bench::{check, plot, probe};
use rheap_harness::paths;
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

/// What a mode's run is, unless the options say otherwise.
struct Defaults {
    clients: &'static [usize],
    rounds: usize,
    cell_secs: f64,
    warmup_secs: f64,
    starts: usize,
}

impl Mode {
    const ALL: [(Mode, &'static str); 3] = [
        (Mode::Quick, "default"),
        (Mode::Full, "--full"),
        (Mode::Smoke, "--smoke"),
    ];

    fn defaults(self) -> Defaults {
        match self {
            // Many short rounds rather than a few long ones: the machine's speed moves in spells
            // of a tenth of a second or more, which longer cells do not average out, while
            // more rounds (each pairing configurations a few cells apart) do.
            Mode::Quick => Defaults {
                clients: &[1, 4, 16],
                rounds: 25,
                cell_secs: 0.05,
                warmup_secs: 0.15,
                starts: 1,
            },
            Mode::Full => Defaults {
                clients: &[1, 4, 16, 64],
                rounds: 40,
                cell_secs: 0.25,
                warmup_secs: 0.5,
                starts: 4,
            },
            Mode::Smoke => Defaults {
                clients: &[1],
                rounds: 1,
                cell_secs: 0.1,
                warmup_secs: 0.0,
                starts: 1,
            },
        }
    }
}

/// `what`, then an option's default in each mode: `what [default: 25; --full: 40; --smoke: 1]`.
fn with_defaults(what: &str, default: impl Fn(&Defaults) -> String) -> String {
    let each: Vec<String> = Mode::ALL
        .iter()
        .map(|&(mode, name)| format!("{name}: {}", default(&mode.defaults())))
        .collect();
    format!("{what} [{}]", each.join("; "))
}

/// The sizes each system runs at, for `--help`: "16M and 16G".
fn sizes() -> String {
    let sizes: Vec<&str> = SIZES.iter().map(|s| s.0).collect();
    sizes.join(" and ")
}

/// At least 1.
fn positive() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(1..)
}

/// Seconds, finite and more than 0.
fn seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err("must be a number of seconds more than 0".into())
    }
}

const USAGE: &str = "rheap-bench [--full | --smoke] [--workload NAME]... [--system NAME]... \
                     [--clients 1,4,16] [--rounds N] [--cell-secs S] [--starts N]\n       \
                     rheap-bench --pool RESULTS.json RESULTS.json...";

/// rheap's QPS benchmark: the statements ORMs and admin tools fire at start-up, and queries
/// that build in-memory temp tables, on each system at each size, all in one interleaved run.
///
/// Quick by default (about 3 minutes); --full: the whole matrix over several starts of the
/// servers (about 20 minutes); --smoke: one tiny round, checking that results agree and the
/// report is written. Prints the tables and where the plot and results.json are (target/bench/).
/// --pool (anywhere on the line, with nothing but the files): the acceptance lines over several
/// runs' results.json, their rounds pooled as one run's.
#[derive(Debug, Parser)]
#[command(name = "rheap-bench", override_usage = USAGE, after_help = format!(
    "Each system runs at tmp_table_size = max_heap_table_size = {}.", sizes()
))]
struct Cli {
    /// The whole matrix: more clients, rounds and starts.
    #[arg(long, conflicts_with = "smoke")]
    full: bool,

    /// One tiny round: results agree across systems and the report is written.
    #[arg(long)]
    smoke: bool,

    // (No doc comments where the help is made from the lists: clap would take theirs.)
    #[arg(
        long = "workload",
        value_name = "NAME",
        value_parser = workload::arg_parser(),
        help = "A workload to run, repeatable [default: every one]"
    )]
    workloads: Vec<Workload>,

    #[arg(
        long = "system",
        value_name = "NAME",
        value_parser = system::arg_parser(),
        default_values = ["stock", "rheap"],
        help = "A system to run, repeatable; the first is the baseline of the ratios"
    )]
    systems: Vec<String>,

    #[arg(
        long,
        value_name = "1,4,16",
        value_delimiter = ',',
        value_parser = positive(),
        help = with_defaults("Client counts", |d| {
            d.clients.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
        })
    )]
    clients: Vec<usize>,

    #[arg(
        long,
        value_name = "N",
        value_parser = positive(),
        help = with_defaults("Counted rounds", |d| d.rounds.to_string())
    )]
    rounds: Option<usize>,

    #[arg(
        long,
        value_name = "S",
        value_parser = seconds,
        allow_negative_numbers = true,
        help = with_defaults("Seconds per cell in a counted round", |d| d.cell_secs.to_string())
    )]
    cell_secs: Option<f64>,

    #[arg(
        long,
        value_name = "N",
        value_parser = positive(),
        help = with_defaults(
            "Starts of each server the rounds are split over (restarted between them)",
            |d| d.starts.to_string()
        )
    )]
    starts: Option<usize>,

    /// Pool the runs of RESULTS.json (two or more) instead of running: their acceptance lines.
    #[arg(
        long,
        requires = "results",
        conflicts_with_all = ["full", "smoke", "workloads", "systems", "clients", "rounds", "cell_secs", "starts"]
    )]
    pool: bool,

    /// With --pool: the results.json of each run to pool.
    #[arg(value_name = "RESULTS.json", requires = "pool")]
    results: Vec<PathBuf>,
}

impl Cli {
    /// [`Cli::try_parse_from`], and two or more files for --pool.
    fn parse_checked<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let cli = Cli::try_parse_from(args)?;
        if cli.pool && cli.results.len() < 2 {
            return Err(Cli::command().error(
                clap::error::ErrorKind::TooFewValues,
                "--pool needs two or more results.json files",
            ));
        }
        Ok(cli)
    }

    fn mode(&self) -> Mode {
        match (self.full, self.smoke) {
            (true, _) => Mode::Full,
            (_, true) => Mode::Smoke,
            _ => Mode::Quick,
        }
    }

    fn plan(&self) -> Plan {
        let d = self.mode().defaults();
        Plan {
            workloads: if self.workloads.is_empty() {
                workload::ALL.to_vec()
            } else {
                self.workloads.clone()
            },
            clients: if self.clients.is_empty() {
                d.clients.to_vec()
            } else {
                self.clients.clone()
            },
            rounds: self.rounds.unwrap_or(d.rounds),
            cell: Duration::from_secs_f64(self.cell_secs.unwrap_or(d.cell_secs)),
            warmup: Duration::from_secs_f64(d.warmup_secs),
            starts: self.starts.unwrap_or(d.starts),
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
    let args = Cli::parse_checked(std::env::args_os()).unwrap_or_else(|e| e.exit());
    if args.pool {
        return pool(&args.results);
    }
    let started = Instant::now();
    let plan = args.plan();
    let mode = args.mode();
    let systems = &args.systems;
    let schema = Schema::standard();
    let iterations: Vec<Arc<Vec<String>>> = plan
        .workloads
        .iter()
        .map(|w| Arc::new(w.iteration(&schema)))
        .collect();

    if systems.iter().any(|s| s.starts_with("rheap")) {
        let dir = rheap_harness::plugin::dir()?;
        eprintln!("plugin directory: {}", dir.display());
    }
    let n_configs = systems.len() * SIZES.len();
    eprintln!(
        "starting {n_configs} servers and loading {} tables into each ...",
        schema.tables.len()
    );
    let mut configs = start_all(systems, &schema)?;
    let labels: Vec<String> = configs.iter().map(Configuration::label).collect();
    for (c, config) in configs.iter().enumerate() {
        // Each system's build once (its sizes run the same one).
        if let Some(b) = &config.build {
            let name = config.system.name();
            if configs[..c].iter().all(|o| o.system.name() != name) {
                eprintln!("{name}: {b}");
            }
        }
    }

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
    let probe_workloads: Vec<usize> = if mode == Mode::Smoke {
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
    let dir = if mode == Mode::Smoke {
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
    if mode == Mode::Smoke {
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
fn pool(paths: &[PathBuf]) -> Result<()> {
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
            build: c.build.clone(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::error::ErrorKind;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::parse_checked(std::iter::once("rheap-bench").chain(args.iter().copied()))
    }

    fn kind(args: &[&str]) -> ErrorKind {
        parse(args).expect_err(&format!("{args:?}")).kind()
    }

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn defaults_per_mode() {
        let quick = parse(&[]).unwrap();
        assert_eq!(quick.mode(), Mode::Quick);
        assert_eq!(quick.systems, ["stock", "rheap"]);
        assert!(!quick.pool);
        let p = quick.plan();
        let names: Vec<&str> = p.workloads.iter().map(|w| w.name).collect();
        let all: Vec<&str> = workload::ALL.iter().map(|w| w.name).collect();
        assert_eq!(names, all);
        assert_eq!((p.clients, p.rounds, p.starts), (vec![1, 4, 16], 25, 1));
        assert_eq!(p.cell, Duration::from_millis(50));
        assert_eq!(p.warmup, Duration::from_millis(150));

        let full = parse(&["--full"]).unwrap().plan();
        assert_eq!(
            (full.clients, full.rounds, full.starts),
            (vec![1, 4, 16, 64], 40, 4)
        );
        assert_eq!(full.cell, Duration::from_millis(250));
        let smoke = parse(&["--smoke"]).unwrap();
        assert_eq!(smoke.mode(), Mode::Smoke);
        let smoke = smoke.plan();
        assert_eq!((smoke.clients, smoke.rounds), (vec![1], 1));
        assert_eq!(smoke.warmup, Duration::ZERO);
    }

    #[test]
    fn options_override_the_mode() {
        let c = parse(&[
            "--full",
            "--workload",
            "show_index",
            "--workload",
            "group_by",
            "--system",
            "rheap-off",
            "--system",
            "rheap-b",
            "--clients",
            "2,8",
            "--rounds",
            "7",
            "--cell-secs",
            "0.5",
            "--starts",
            "3",
        ])
        .unwrap();
        assert_eq!(c.systems, ["rheap-off", "rheap-b"]);
        let p = c.plan();
        let names: Vec<&str> = p.workloads.iter().map(|w| w.name).collect();
        assert_eq!(names, ["show_index", "group_by"]);
        assert_eq!((p.clients, p.rounds, p.starts), (vec![2, 8], 7, 3));
        assert_eq!(p.cell, Duration::from_millis(500));
        assert_eq!(p.warmup, Duration::from_millis(500), "--full's warm-up");
    }

    #[test]
    fn full_and_smoke_conflict() {
        assert_eq!(kind(&["--full", "--smoke"]), ErrorKind::ArgumentConflict);
        assert_eq!(kind(&["--smoke", "--full"]), ErrorKind::ArgumentConflict);
    }

    #[test]
    fn pool_is_accepted_anywhere_and_alone() {
        for args in [
            &["--pool", "a.json", "b.json"][..],
            &["a.json", "--pool", "b.json"],
            &["a.json", "b.json", "--pool"],
        ] {
            let c = parse(args).unwrap();
            assert!(c.pool, "{args:?}");
            assert_eq!(
                c.results,
                [PathBuf::from("a.json"), PathBuf::from("b.json")]
            );
        }
        assert_eq!(parse(&["--pool", "a", "b", "c"]).unwrap().results.len(), 3);
        for run_flag in [
            &["--full"][..],
            &["--smoke"],
            &["--workload", "distinct"],
            &["--system", "stock"],
            &["--clients", "1"],
            &["--rounds", "2"],
            &["--cell-secs", "1"],
            &["--starts", "2"],
        ] {
            let mut args = vec!["a.json", "--pool", "b.json"];
            args.extend(run_flag);
            assert_eq!(kind(&args), ErrorKind::ArgumentConflict, "{args:?}");
        }
        assert_eq!(kind(&["--pool", "a.json"]), ErrorKind::TooFewValues);
        assert_eq!(
            kind(&["--pool"]),
            ErrorKind::MissingRequiredArgument,
            "no files"
        );
        assert_eq!(
            kind(&["a.json", "b.json"]),
            ErrorKind::MissingRequiredArgument,
            "files without --pool"
        );
    }

    #[test]
    fn unknown_names_and_bad_numbers_are_errors() {
        let e = parse(&["--workload", "show_indexes"]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidValue);
        let text = e.to_string();
        assert!(
            workload::ALL.iter().all(|w| text.contains(w.name)),
            "{text}"
        );
        let e = parse(&["--system", "rheap-z"]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidValue);
        let text = e.to_string();
        assert!(
            system::all().iter().all(|s| text.contains(s.name())),
            "{text}"
        );
        for bad in [
            &["--clients", "1,x"][..],
            &["--clients", "0"],
            &["--rounds", "0"],
            &["--starts", "0"],
            &["--cell-secs", "0"],
            &["--cell-secs", "-1"],
            &["--cell-secs", "inf"],
        ] {
            assert_eq!(kind(bad), ErrorKind::ValueValidation, "{bad:?}");
        }
        assert_eq!(kind(&["--rounds"]), ErrorKind::InvalidValue, "no value");
        assert_eq!(kind(&["--fast"]), ErrorKind::UnknownArgument);
    }

    #[test]
    fn help_lists_the_workloads_systems_and_defaults() {
        let help = Cli::command().render_long_help().to_string();
        for w in workload::ALL {
            assert!(
                help.contains(&format!("- {}:", w.name)) && help.contains(w.about),
                "{}",
                w.name
            );
        }
        for s in system::all() {
            assert!(
                help.contains(&format!("- {}:", s.name())) && help.contains(s.about()),
                "{}",
                s.name()
            );
        }
        for default in [
            "[default: 1,4,16; --full: 1,4,16,64; --smoke: 1]",
            "[default: 25; --full: 40; --smoke: 1]",
            "[default: 0.05; --full: 0.25; --smoke: 0.1]",
            "[default: 1; --full: 4; --smoke: 1]",
            "[default: stock rheap]",
        ] {
            assert!(help.contains(default), "{default} in\n{help}");
        }
    }
}
