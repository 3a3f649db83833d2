//! rheap's developer and CI driver; the scripts in ci/ call it. `rheap-dev --help` lists the
//! subcommands, `rheap-dev SUBCOMMAND --help` their options and defaults.
//!
//! It never builds the plugin: `cargo xtask dist` does (and `test` runs it first); the
//! subcommands load what that left in `target/dist`, staged in `target/plugin`
//! (`rheap_harness::plugin`), or the directory `RHEAP_PLUGIN_DIR` names.
//!
//! - `plugin`: prints the staged plugin (`--failpoints`: the fault-injection variant's).
//! - `serve [--smoke]`: a private server with RHEAP loaded; prints how to connect and runs
//!   until interrupted (`--smoke`: checks it answers, then stops).
//! - `mtr [ARGS]`: our mtr suite (extra ARGS go to mtr, e.g. test names), on the engine
//!   `--engine`/`$RHEAP_ENGINE` names (RHEAP by default; MEMORY must give the same results).
//! - `upstream`: the upstream `heap` suite and temp-table-heavy `main` tests, which must pass
//!   unchanged with the plugin loaded at its package's defaults and `--rheap-takeover=ALL`
//!   (but those mtr-tests/conformance.exceptions lists for that setting, left out with their
//!   reason).
//! - `conformance [ARGS]`: whole main and heap suites, stock vs plugin (conformance.rs).
//! - `takeover [ARGS]`: our rheap_takeover suite (routing, conversion to disk).
//! - `storage-engine [ARGS]`: the server's generic engine suite against ENGINE=RHEAP and, side
//!   by side, ENGINE=MEMORY; RHEAP's failures are judged by mtr-tests/storage_engine.exceptions
//!   and compared with MEMORY's (extra ARGS go to both mtr runs).
//! - `stress [--threads N] [--secs S]`: the stress run (default 32 clients for 60 s): temp-table
//!   statements, DDL, shared-table writers and readers, rheap_takeover switches; then the final
//!   checks (server up, committed rows, Rheap_tables_live, error log).
//! - `valgrind [ARGS]`: our rheap suite on RHEAP with `mysql-test-run --valgrind` (memcheck on
//!   mariadbd); fails on any valgrind error whose stack passes through rheap. Slow (several
//!   minutes); not part of `test`.
//! - `docker-check`: the checks of docker/ that need no Docker engine.
//! - `container-recipe`: docker/Dockerfile's instructions run in a fresh Debian 12 root, then
//!   the container's `ci/test` and `ci/bench --smoke` (src/container_recipe.rs; not in `test`).
//! - `cleanroom`: the clean-room install test of the Debian package (`cargo xtask package`)
//!   in a fresh minimal Debian 12 root (src/cleanroom.rs).
//! - `fuzz [--minutes N] [--seed S] [--mode twin|servers|both]`: the differential fuzzer
//!   (src/fuzz): MEMORY against RHEAP twin tables, and a stock server against one with rheap;
//!   prints statements run, statements per second and mismatches, and writes each mismatch,
//!   shrunk, as an mtr test case under target/fuzz/.
//! - `test`: every check, in order (the plugin's two builds by `cargo xtask dist` first, the
//!   package and its clean-room test, the short stress run among the rest), with progress;
//!   the last line is `N passed, N failed, N skipped` over everything that ran.

use anyhow::{bail, Result};
use clap::{Parser, Subcommand, ValueEnum};
use mysql::prelude::Queryable;
use rheap_harness::server::{Options, Server};
use rheap_harness::{paths, plugin, process, sql};
use rheap_mtr_tests::{
    cleanroom, conformance, container_recipe, docker_check, fuzz, mtr, storage_engine, stress,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The upstream `main` tests heavy in temporary tables that must pass unchanged with every
/// MEMORY table served by rheap (`--rheap-takeover=ALL`), beside the whole `heap` suite.
const UPSTREAM_CONFORMANCE: &[&str] = &[
    "main.group_by",
    "main.group_by_null",
    "main.group_min_max",
    "main.distinct",
    "main.derived",
    "main.derived_view",
    "main.union",
    "main.having",
    "main.subselect",
    "main.subselect_mat",
    "main.subselect_sj",
    "main.order_by",
    "main.ps_4heap",
    "main.ctype_utf8mb4_heap",
    "main.strict_autoinc_3heap",
    "main.tmp_table_error",
    "main.tmp_table_count-7586",
    "main.memory_used",
    "main.information_schema",
    "main.show_check",
    "main.count_distinct",
    "main.func_group",
    "main.win",
    "main.cte_recursive",
    "main.intersect",
    "main.except",
];

/// The seed and the time per mode of the fuzzer's run in `test` (`rheap-dev fuzz` runs longer,
/// from any seed).
const CI_FUZZ_SEED: u64 = 20261202;
const CI_FUZZ_BUDGET: Duration = Duration::from_secs(45);

#[derive(Parser)]
#[command(
    name = "rheap-dev",
    about = "rheap's developer and CI driver (the plugin is built by `cargo xtask dist`)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the staged plugin (target/plugin/ha_rheap.so, staged from target/dist; never
    /// builds: `cargo xtask dist` does).
    Plugin {
        /// The fault-injection variant's (`cargo xtask dist --failpoints`).
        #[arg(long)]
        failpoints: bool,
    },
    /// A private server with RHEAP loaded; prints how to connect, runs until interrupted.
    Serve {
        /// Check that it answers, then stop.
        #[arg(long)]
        smoke: bool,
    },
    /// Our mtr suite (mtr-tests/mysql-test/rheap).
    Mtr {
        /// The engine the suite's tables use (MEMORY must give the same results).
        #[arg(long, env = "RHEAP_ENGINE", default_value = "RHEAP")]
        engine: String,
        /// Arguments for mysql-test-run (test names, --record, ...).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        mtr_args: Vec<String>,
    },
    /// The upstream heap suite and temp-table-heavy main tests with rheap_takeover=ALL.
    Upstream {
        /// rheap_table_size_limit for the run: ACTUAL (the package's default) or HEAP (tables
        /// fill at MEMORY's own row); every other setting at its default.
        #[arg(long, default_value = "ACTUAL", value_parser = ["ACTUAL", "HEAP"])]
        table_size_limit: String,
    },
    /// The whole main and heap suites, stock server vs plugin at its package's defaults with
    /// rheap_takeover=ALL.
    Conformance {
        /// rheap_table_size_limit of the plugin's pass: ACTUAL (the package's default), HEAP
        /// (tables fill at MEMORY's own row, for the row-exact comparison) or BOTH (a pass of
        /// each, after one stock pass).
        #[arg(long, default_value = "ACTUAL", value_parser = ["ACTUAL", "HEAP", "BOTH"])]
        table_size_limit: String,
        /// Arguments for mysql-test-run.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        mtr_args: Vec<String>,
    },
    /// Our rheap_takeover suite (routing, conversion to disk).
    Takeover {
        /// Arguments for mysql-test-run.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        mtr_args: Vec<String>,
    },
    /// The server's storage_engine suite on RHEAP, and on MEMORY to compare.
    StorageEngine {
        /// Arguments for both mysql-test-run runs.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        mtr_args: Vec<String>,
    },
    /// The checks of docker/ that need no Docker engine (hadolint, compose schema, scripts).
    DockerCheck,
    /// The clean-room install test: the package in target/package (`cargo xtask package`)
    /// into a fresh minimal Debian 12 root with Debian's server: install, load, takeover, no
    /// mmap per statement, plain mtr, removal. Needs root and the network (debootstrap, apt).
    Cleanroom,
    /// docker/Dockerfile's own instructions run in a fresh minimal Debian 12 root (no Docker
    /// engine needed), then the container's commands: ci/test and ci/bench --smoke. Needs root
    /// and the network; 30 to 60 minutes; not part of `test`.
    ContainerRecipe,
    /// Our rheap suite under mysql-test-run --valgrind (several minutes; not in `test`).
    Valgrind {
        /// Arguments for mysql-test-run.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        mtr_args: Vec<String>,
    },
    /// The stress run on a private server, then its final checks.
    Stress {
        /// Client threads.
        #[arg(long, default_value_t = stress::Config::FULL.threads)]
        threads: usize,
        /// Seconds to run.
        #[arg(long, default_value_t = stress::Config::FULL.secs)]
        secs: u64,
    },
    /// The differential fuzzer: MEMORY vs RHEAP twin tables, and a stock server vs rheap.
    Fuzz {
        /// Minutes per mode.
        #[arg(long, default_value_t = 1.0)]
        minutes: f64,
        /// The seed (default: the clock's, printed so that a run can be repeated).
        #[arg(long)]
        seed: Option<u64>,
        /// Which fuzzer runs.
        #[arg(long, value_enum, default_value_t = FuzzMode::Both)]
        mode: FuzzMode,
    },
    /// Every check, in order (builds the plugin with `cargo xtask dist` first); the last line
    /// is `N passed, N failed, N skipped`.
    Test,
}

#[derive(Clone, Copy, ValueEnum)]
enum FuzzMode {
    Twin,
    Servers,
    Both,
}

fn main() {
    let result = match Cli::parse().command {
        Command::Plugin { failpoints } => {
            let dir = if failpoints {
                plugin::failpoints_dir()
            } else {
                plugin::dir()
            };
            dir.map(|d| println!("{}", d.join("ha_rheap.so").display()))
        }
        Command::Serve { smoke } => serve(smoke),
        Command::Mtr { engine, mtr_args } => {
            report(&[Tally::mtr_result(
                &format!("rheap suite on {engine}"),
                our_mtr(&engine, &mtr_args),
            )]);
            Ok(())
        }
        Command::Upstream { table_size_limit } => {
            let limit = match table_size_limit.as_str() {
                "HEAP" => conformance::Limit::Heap,
                _ => conformance::Limit::Actual,
            };
            report(&[Tally::mtr_result(
                &format!("upstream, rheap_takeover=ALL, rheap_table_size_limit={table_size_limit}"),
                upstream_conformance(limit),
            )]);
            Ok(())
        }
        Command::Conformance {
            table_size_limit,
            mtr_args,
        } => {
            use conformance::Limit;
            let limits: &[Limit] = match table_size_limit.as_str() {
                "HEAP" => &[Limit::Heap],
                "BOTH" => &[Limit::Actual, Limit::Heap],
                _ => &[Limit::Actual],
            };
            conformance::run(limits, &mtr_args).map(|reports| {
                if !reports.iter().all(conformance::Report::ok) {
                    std::process::exit(1);
                }
            })
        }
        Command::Takeover { mtr_args } => {
            report(&[Tally::mtr_result(
                "rheap_takeover suite",
                our_takeover_mtr(&mtr_args),
            )]);
            Ok(())
        }
        Command::StorageEngine { mtr_args } => {
            report(&[storage_engine_tally(&mtr_args)]);
            Ok(())
        }
        Command::DockerCheck => {
            report(&[docker_tally()]);
            Ok(())
        }
        Command::Cleanroom => {
            report(&cleanroom_tallies());
            Ok(())
        }
        Command::ContainerRecipe => container_recipe::run(
            &paths::workspace(),
            &[
                vec!["ci/test".into()],
                vec!["ci/bench".into(), "--smoke".into()],
            ],
        )
        .map(|tails| {
            for (command, tail) in tails {
                println!("\n==> the last lines of {command} in the root:\n{tail}");
            }
        }),
        Command::Valgrind { mtr_args } => {
            report(&[valgrind_tally(&mtr_args)]);
            Ok(())
        }
        Command::Stress { threads, secs } => {
            report(&[stress_tally(stress::Config { threads, secs })]);
            Ok(())
        }
        Command::Fuzz {
            minutes,
            seed,
            mode,
        } => {
            let modes = match mode {
                FuzzMode::Twin => vec![fuzz::Mode::Twin],
                FuzzMode::Servers => vec![fuzz::Mode::Servers],
                FuzzMode::Both => vec![fuzz::Mode::Twin, fuzz::Mode::Servers],
            };
            let seed = seed.unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_secs())
            });
            println!("fuzz: seed {seed}, {minutes} minute(s) per mode");
            let budget = Duration::from_secs_f64(minutes * 60.0);
            let tallies: Vec<Tally> = modes.iter().map(|&m| fuzz_tally(m, seed, budget)).collect();
            report(&tallies);
            Ok(())
        }
        Command::Test => test(),
    };
    if let Err(e) = result {
        eprintln!("rheap-dev: {e:#}");
        std::process::exit(1);
    }
}

fn serve(smoke: bool) -> Result<()> {
    let server = Server::start(Options::with_plugin_loaded()?)?;
    let mut c = server.conn()?;
    if !sql::rheap_available(&mut c)? {
        bail!(
            "the server started but RHEAP is not available; error log:\n{}",
            server.error_log()
        );
    }
    println!("A private MariaDB server is running with RHEAP loaded.");
    println!(
        "Connect with:\n  mariadb --socket={} -u root test",
        server.socket().display()
    );
    println!("e.g. CREATE TABLE t (a INT) ENGINE=RHEAP;");
    if smoke {
        c.query_drop("CREATE TABLE smoke (a INT) ENGINE=RHEAP")?;
        c.query_drop("INSERT INTO smoke VALUES (1)")?;
        c.query_drop("DROP TABLE smoke")?;
        println!("(--smoke: it answers; stopping)");
        return Ok(());
    }
    println!(
        "Press Ctrl-C to stop it (its data is in {}).",
        server.data_dir().display()
    );
    loop {
        std::thread::park();
    }
}

/// Our suite with its tables on `engine` (RHEAP, or MEMORY: the result files are the same).
fn our_mtr(engine: &str, extra: &[String]) -> Result<mtr::Summary> {
    let dir = plugin::dir()?;
    let mut run = mtr::Run::new(&format!("rheap-{}", engine.to_lowercase()));
    run.suites.push(mtr::our_suite("rheap")?);
    run.env = mtr::rheap_env(&dir);
    run.env.push(("RHEAP_ENGINE".into(), engine.into()));
    run.tests = extra.to_vec();
    run.run()
}

/// Our rheap_takeover suite: its suite.opt loads the plugin; the tests set the mode.
fn our_takeover_mtr(extra: &[String]) -> Result<mtr::Summary> {
    let dir = plugin::dir()?;
    let mut run = mtr::Run::new("rheap-takeover");
    run.suites.push(mtr::our_suite("rheap_takeover")?);
    run.env = mtr::rheap_env(&dir);
    run.tests = extra.to_vec();
    run.run()
}

/// The upstream heap suite and temp-table-heavy main tests with the plugin loaded at its
/// package's defaults (`rheap_table_size_limit` as `limit` says) and every MEMORY table
/// (internal or not) served by rheap: they must pass unchanged, but those that
/// mtr-tests/conformance.exceptions lists for that setting, which are left out, each named
/// with its reason.
fn upstream_conformance(limit: conformance::Limit) -> Result<mtr::Summary> {
    let dir = plugin::dir()?;
    let accepted = conformance::Accepted::load(&conformance::list_file())?.for_pass(limit);
    let mut run = mtr::Run::new("upstream-takeover");
    let loaded = mtr::our_suite("rheap_loaded")?;
    run.suites = vec!["heap".into(), "main".into(), loaded.clone()];
    run.tests = mtr::suite_tests("heap")?;
    run.tests
        .extend(UPSTREAM_CONFORMANCE.iter().map(|t| t.to_string()));
    run.tests.retain(|t| match accepted.reason(t) {
        Some(reason) => {
            println!("upstream: {t} left out, a listed difference: {reason}");
            false
        }
        None => true,
    });
    // Fails unless the plugin really is loaded, and serving, in this configuration.
    run.tests.push(format!("{loaded}.loaded"));
    run.mysqld = vec![
        format!("--plugin-dir={}", dir.display()),
        "--plugin-load-add=ha_rheap.so".into(),
        // `loose-`, as in conformance.rs: a server a test restarts with a setting that
        // refuses the plugin starts without it, as a user's would.
        "--loose-rheap-takeover=ALL".into(),
        format!("--loose-rheap-table-size-limit={}", limit.name()),
    ];
    run.run()
}

/// The storage_engine suite as a step: its passes, its problems as failures (a listed
/// failure whose reason holds is expected, so it counts as skipped, never as a pass).
/// MEMORY's run only serves the comparison and is not counted.
fn storage_engine_tally(extra: &[String]) -> Tally {
    let name = "mtr storage_engine suite";
    match storage_engine::run(extra) {
        Ok(v) => {
            let notes = v.problems();
            Tally {
                name: name.into(),
                passed: v.passed.len() + v.stale.len(),
                failed: notes.len(),
                skipped: v.skipped.len()
                    + v.listed_skipped.len()
                    + v.as_memory.len()
                    + v.rheap_specific.len(),
                notes,
            }
        }
        Err(e) => Tally::failure(name, &e),
    }
}

/// The docker/ checks as a step (hadolint, the compose schema and services, the scripts the
/// container calls): one pass or failure per check. The image itself is not built.
fn docker_tally() -> Tally {
    let checks = docker_check::run(&paths::workspace());
    let notes: Vec<String> = (checks.iter())
        .filter_map(|c| Some(format!("{}: {}", c.name, c.problem.as_ref()?)))
        .collect();
    Tally {
        name: "docker/ checks (image not built)".into(),
        passed: checks.len() - notes.len(),
        failed: notes.len(),
        skipped: 0,
        notes,
    }
}

/// Our rheap suite under `mtr --valgrind`, then every valgrind report in the server logs:
/// one failure per report whose stack passes through rheap (others are the server's own and
/// only listed).
fn valgrind_tally(extra: &[String]) -> Tally {
    let name = "rheap suite under valgrind";
    let run = || -> Result<(mtr::Summary, mtr::Valgrind)> {
        let dir = plugin::dir()?;
        let mut run = mtr::Run::new("valgrind");
        let _ = std::fs::remove_dir_all(&run.vardir);
        run.suites.push(mtr::our_suite("rheap")?);
        run.env = mtr::rheap_env(&dir);
        run.env.push(("RHEAP_ENGINE".into(), "RHEAP".into()));
        // mtr's own memcheck options and suppressions, and ours (reachable-at-exit memory of
        // the loader and OpenSSL, which mtr flags when a test restarts the server).
        let supp = paths::workspace().join("mtr-tests/valgrind.supp");
        run.options = vec![format!("--valgrind=--suppressions={}", supp.display())];
        run.tests = extra.to_vec();
        let summary = run.run()?;
        let reports = mtr::valgrind_reports(&run.vardir)?;
        Ok((summary, reports))
    };
    match run() {
        Ok((s, v)) => {
            println!(
                "valgrind: {} servers under memcheck, {} error reports, {} through rheap",
                v.servers,
                v.errors.len(),
                v.rheap_errors()
            );
            for line in &v.summaries {
                println!("  {line}");
            }
            for (first, rheap) in &v.errors {
                println!("  {} {first}", if *rheap { "RHEAP " } else { "server" });
            }
            if let Some(r) = &v.first_rheap {
                println!("first report through rheap:\n{r}");
            }
            let mut t = Tally::mtr(name, &s);
            if v.servers == 0 {
                t.failed += 1;
                t.notes.push("no server ran under valgrind".into());
            }
            if v.rheap_errors() > 0 {
                t.failed += v.rheap_errors();
                t.notes.push(format!(
                    "{} valgrind errors through rheap",
                    v.rheap_errors()
                ));
            }
            t
        }
        Err(e) => Tally::failure(name, &e),
    }
}

/// One fuzz mode as a step: its clean cases pass, each mismatch fails (with its mtr case).
fn fuzz_tally(mode: fuzz::Mode, seed: u64, budget: Duration) -> Tally {
    let name = format!("fuzz {} (seed {seed})", mode.name());
    match fuzz::run(mode, seed, budget, 3) {
        Ok(r) => {
            println!("{}", r.summary());
            Tally {
                name,
                passed: (r.cases as usize).saturating_sub(r.mismatches.len()),
                failed: r.mismatches.len(),
                skipped: 0,
                notes: r
                    .mismatches
                    .iter()
                    .map(|m| {
                        format!(
                            "case {}: {} (mtr case {})",
                            m.case,
                            m.statement,
                            m.script.display()
                        )
                    })
                    .collect(),
            }
        }
        Err(e) => Tally::failure(&name, &e),
    }
}

/// The stress run as a step: one pass or failure per final check.
fn stress_tally(cfg: stress::Config) -> Tally {
    let name = format!("stress ({} clients, {} s)", cfg.threads, cfg.secs);
    println!(
        "stress: {} clients for {} s on a private server",
        cfg.threads, cfg.secs
    );
    match stress::run(cfg) {
        Ok(r) => {
            r.print();
            let notes: Vec<String> = (r.checks.iter())
                .filter(|c| !c.1)
                .map(|c| format!("{}: {}", c.0, c.2))
                .collect();
            Tally {
                name,
                passed: r.checks.len() - notes.len(),
                failed: notes.len(),
                skipped: 0,
                notes,
            }
        }
        Err(e) => Tally::failure(&name, &e),
    }
}

/// The clean-room install test of the package in target/package, one row per step.
fn cleanroom_tallies() -> Vec<Tally> {
    // SAFETY: geteuid(2) has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return vec![Tally {
            notes: vec!["needs root (debootstrap, chroot, mount)".into()],
            ..Tally::check("clean room", false)
        }];
    }
    let deb = match cleanroom::built_package() {
        Ok(deb) => deb,
        Err(e) => return vec![Tally::failure("clean room", &e)],
    };
    cleanroom::run(&deb)
        .into_iter()
        .map(|s| {
            let name = format!("clean room: {}", s.name);
            match s.result {
                Ok(_) => Tally::check(&name, true),
                Err(e) => Tally::failure(&name, &e),
            }
        })
        .collect()
}

/// What one step counted.
struct Tally {
    name: String,
    passed: usize,
    failed: usize,
    skipped: usize,
    notes: Vec<String>,
}

impl Tally {
    fn check(name: &str, ok: bool) -> Tally {
        Tally {
            name: name.into(),
            passed: usize::from(ok),
            failed: usize::from(!ok),
            skipped: 0,
            notes: vec![],
        }
    }

    fn mtr(name: &str, s: &mtr::Summary) -> Tally {
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
    fn failure(name: &str, e: &anyhow::Error) -> Tally {
        Tally {
            notes: vec![format!("{e:#}")],
            ..Tally::check(name, false)
        }
    }

    /// An mtr step, or one failure with the reason when it could not run at all.
    fn mtr_result(name: &str, r: Result<mtr::Summary>) -> Tally {
        match r {
            Ok(s) => Tally::mtr(name, &s),
            Err(e) => Tally::failure(name, &e),
        }
    }
}

/// The plugin's builds the commands `run_echo` ran said they made: `cargo xtask` prints each
/// cargo command that builds it as a line starting with this.
const BUILD_LINE: &str = "[xtask] cargo build";
static PLUGIN_BUILDS: AtomicUsize = AtomicUsize::new(0);

/// Runs a command from the workspace root, echoing its output; returns success and output.
/// Counts the plugin's builds in it ([`BUILD_LINE`]).
fn run_echo(program: &str, args: &[&str]) -> Result<(bool, String)> {
    run_echo_with(program, args, &[])
}

/// [`run_echo`] with `env` added to the command's environment.
fn run_echo_with(program: &str, args: &[&str], env: &[(&str, &str)]) -> Result<(bool, String)> {
    let shown: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v} ")).collect();
    println!("$ {}{program} {}", shown.concat(), args.join(" "));
    let cmd = (env.iter()).fold(
        duct::cmd(program, args).dir(paths::workspace()),
        |c, (k, v)| c.env(k, v),
    );
    let mut out = String::new();
    let ok = process::stream(cmd, |line| {
        print!("{line}");
        out.push_str(line);
        Ok(())
    })?;
    PLUGIN_BUILDS.fetch_add(plugin_builds(&out), Ordering::Relaxed);
    Ok((ok, out))
}

/// How many of `out`'s lines say that `cargo xtask` built the plugin.
fn plugin_builds(out: &str) -> usize {
    out.lines().filter(|l| l.starts_with(BUILD_LINE)).count()
}

/// A cargo test run (its success and output) as a step: its tests' counts, and a failure when
/// it failed before running any.
fn cargo_tally(name: &str, (ok, out): (bool, String)) -> Tally {
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

/// The core's modules whose unit tests `test` runs under Miri: those that hold its unsafe code
/// (the allocator, arenas and pieces, the row formats and stores). Every unit test of the core
/// passes under Miri (`cargo +TOOLCHAIN miri test -p rheap-core --lib`, about half an hour);
/// these are the few minutes of it that matter most.
const MIRI_MODULES: &[&str] = &["alloc::", "rows::"];

/// `cargo miri test` of the core's [`MIRI_MODULES`] with the nightly toolchain named in
/// ci/miri-toolchain (which ci/setup installs), through rustup: the cargo that `CARGO` names
/// takes no `+toolchain`. Property tests run a few cases under Miri
/// (`rheap_core::testing::cases`); isolation is off for proptest's clock and files.
fn miri_tally() -> Result<Tally> {
    let file = paths::workspace().join("ci/miri-toolchain");
    let toolchain = std::fs::read_to_string(&file)
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", file.display()))?;
    let mut args = vec![
        "run",
        toolchain.trim(),
        "cargo",
        "miri",
        "test",
        "-p",
        "rheap-core",
        "--lib",
        "--",
    ];
    args.extend(MIRI_MODULES);
    let run = run_echo_with(
        "rustup",
        &args,
        &[("MIRIFLAGS", "-Zmiri-disable-isolation")],
    )?;
    Ok(cargo_tally("Miri: rheap-core's alloc and rows tests", run))
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

/// One step of `test`: its title, and what it runs, giving its tallies.
type Step<'a> = (&'static str, Box<dyn FnOnce() -> Result<Vec<Tally>> + 'a>);

fn test() -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let cargo = cargo.as_str();
    let started = Instant::now();
    let check = |name: &'static str, args: &'static [&'static str]| -> Result<Vec<Tally>> {
        Ok(vec![Tally::check(name, run_echo(cargo, args)?.0)])
    };
    let plan: Vec<Step<'_>> =
        vec![
        (
            "cargo fmt --check",
            Box::new(|| check("cargo fmt --check", &["fmt", "--all", "--check"])),
        ),
        (
            "cargo clippy",
            Box::new(|| {
                check(
                    "cargo clippy -D warnings",
                    &["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"],
                )
            }),
        ),
        (
            "cargo xtask cycles: no import cycle between a crate's modules",
            Box::new(|| check("cargo xtask cycles", &["xtask", "cycles"])),
        ),
        (
            "docker/: hadolint, compose schema, the scripts the container calls (no build)",
            Box::new(|| Ok(vec![docker_tally()])),
        ),
        // The plugin is built here, once, and everything below loads what these left: the
        // directories go to the test binaries, ci/bench and mtr through RHEAP_PLUGIN_DIR and
        // RHEAP_FAILPOINTS_PLUGIN_DIR, so nothing below builds it.
        (
            "build the plugin: cargo xtask dist (release, into target/dist)",
            Box::new(|| {
                Ok(vec![dist_step(cargo, "dist", None, "RHEAP_PLUGIN_DIR", plugin::dir)])
            }),
        ),
        (
            "build the fault-injection variant: cargo xtask dist --failpoints",
            Box::new(|| {
                Ok(vec![dist_step(
                    cargo,
                    "dist --failpoints",
                    Some("--failpoints"),
                    "RHEAP_FAILPOINTS_PLUGIN_DIR",
                    plugin::failpoints_dir,
                )])
            }),
        ),
        (
            "cargo test --workspace",
            Box::new(|| {
                let run = run_echo(cargo, &["test", "--workspace", "--no-fail-fast"])?;
                Ok(vec![cargo_tally("cargo test", run)])
            }),
        ),
        (
            "Miri: the core's unit tests of its unsafe code (alloc, rows), under Miri's checks",
            Box::new(|| Ok(vec![miri_tally()?])),
        ),
        (
            "the main command, as a smoke test: ci/bench --smoke",
            Box::new(|| {
                let bench = paths::workspace().join("ci/bench");
                let ok = run_echo(&bench.display().to_string(), &["--smoke"])?.0;
                Ok(vec![Tally::check("ci/bench --smoke", ok)])
            }),
        ),
        (
            "the Debian package: cargo xtask package (from target/dist)",
            Box::new(|| check("cargo xtask package", &["xtask", "package"])),
        ),
        (
            "clean room: the package into a fresh Debian 12 root with Debian's server",
            Box::new(|| Ok(cleanroom_tallies())),
        ),
        (
            "mtr: our rheap suite on ENGINE=RHEAP",
            Box::new(|| {
                Ok(vec![Tally::mtr_result(
                    "mtr rheap suite",
                    our_mtr("RHEAP", &[]),
                )])
            }),
        ),
        (
            "mtr: our rheap suite on ENGINE=MEMORY, same result files",
            Box::new(|| {
                Ok(vec![Tally::mtr_result(
                    "mtr rheap suite on MEMORY",
                    our_mtr("MEMORY", &[]),
                )])
            }),
        ),
        (
            "mtr: the server's storage_engine suite against ENGINE=RHEAP, and MEMORY to compare",
            Box::new(|| Ok(vec![storage_engine_tally(&[])])),
        ),
        (
            "stress, short: 8 clients for 8 s (the full run: rheap-dev stress)",
            Box::new(|| Ok(vec![stress_tally(stress::Config::SHORT)])),
        ),
        (
            "differential fuzzer, fixed seed: twin tables and two servers, 45 s each",
            Box::new(|| {
                Ok([fuzz::Mode::Twin, fuzz::Mode::Servers]
                    .map(|mode| fuzz_tally(mode, CI_FUZZ_SEED, CI_FUZZ_BUDGET))
                    .into())
            }),
        ),
        (
            "mtr: our rheap_takeover suite (routing, conversion to disk)",
            Box::new(|| {
                Ok(vec![Tally::mtr_result(
                    "mtr rheap_takeover suite",
                    our_takeover_mtr(&[]),
                )])
            }),
        ),
        (
            "mtr: upstream heap suite and temp-table-heavy main tests, the package's defaults \
             and rheap_takeover=ALL",
            Box::new(|| {
                Ok(vec![Tally::mtr_result(
                    "mtr upstream, rheap_takeover=ALL",
                    upstream_conformance(conformance::Limit::Actual),
                )])
            }),
        ),
    ];

    let steps = plan.len();
    let mut tallies = Vec::new();
    for (i, (what, run)) in plan.into_iter().enumerate() {
        println!(
            "\n==> [{}/{steps}] {what} ({:.0?} so far)",
            i + 1,
            started.elapsed()
        );
        tallies.extend(run()?);
    }

    println!("\n==> done in {:.0?}", started.elapsed());
    // Nothing but the two dist steps builds the plugin: a third build means a step built one
    // of its own, which the tests must never do.
    let builds = PLUGIN_BUILDS.load(Ordering::Relaxed);
    println!(
        "cargo builds of the plugin: {builds} (expected 2: the release build of `cargo xtask \
         dist` and the failpoints build of `cargo xtask dist --failpoints`)"
    );
    tallies.push(Tally::check(
        "cargo builds of the plugin: the 2 dist steps'",
        builds == 2,
    ));
    report(&tallies);
    Ok(())
}

/// `cargo xtask dist [flag]` as a step, then the staged directory (`staged`) exported as `var`
/// for everything that runs after it. A failed build leaves `var` unset: what needs the
/// plugin then fails, saying there is none, rather than building one.
fn dist_step(
    cargo: &str,
    name: &str,
    flag: Option<&str>,
    var: &str,
    staged: fn() -> Result<std::path::PathBuf>,
) -> Tally {
    let name = format!("cargo xtask {name}");
    let args: Vec<&str> = ["xtask", "dist"].into_iter().chain(flag).collect();
    let built = run_echo(cargo, &args).and_then(|(ok, _)| {
        if !ok {
            bail!("`{name}` failed (see above)");
        }
        staged()
    });
    match built {
        Ok(dir) => {
            println!("staged {} (exported as {var})", dir.display());
            std::env::set_var(var, &dir);
            Tally::check(&name, true)
        }
        Err(e) => Tally::failure(&name, &e),
    }
}

/// The per-step table and, last, the `N passed, N failed` line; exits 1 when any failed
/// (directly, so that the count line stays the last line).
fn report(tallies: &[Tally]) {
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

    #[test]
    fn plugin_builds_count_xtask_build_lines() {
        let out = "[xtask] cargo build --release -p rheap\n   Compiling rheap v0.1.0\n\
                   [xtask] cargo build, as: cargo rustc --release -p rheap --lib\n\
                   [xtask] target/dist/ha_rheap.so\n";
        assert_eq!(super::plugin_builds(out), 2);
    }

    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }

    #[test]
    fn mtr_arguments_pass_through() {
        use clap::Parser;
        let cli =
            super::Cli::try_parse_from(["rheap-dev", "mtr", "--record", "hash_index"]).unwrap();
        match cli.command {
            super::Command::Mtr { mtr_args, .. } => {
                assert_eq!(mtr_args, ["--record", "hash_index"])
            }
            _ => panic!("not mtr"),
        }
        assert!(super::Cli::try_parse_from(["rheap-dev", "stress", "--threads", "x"]).is_err());
    }
}
