//! `cargo xtask`: rheap's one task runner (the alias is in `.cargo/config.toml`); the scripts
//! in ci/ call it. `cargo xtask --help` lists the commands, `cargo xtask COMMAND --help` their
//! options and defaults.
//!
//! Builds:
//! - `dist`: the plugin, a plain release build, in `target/dist/ha_rheap.so` with
//!   `target/dist/build.json` (what was built, from which commit); `--pgo` from a
//!   profile-guided build ([`pgo`]); `--failpoints` the test-only fault-injection variant, in
//!   `target/dist/failpoints/`.
//! - `package`: the Debian package `mariadb-plugin-rheap_<version>_<arch>.deb` in
//!   `target/package/`, from what `dist` left, for the installed server ([`package`]).
//!
//! Checks:
//! - `cycles`: fails when a crate of the workspace has an import cycle between its modules
//!   ([`cycles`]).
//! - `docker-check`: the checks of docker/ that need no Docker engine ([`docker_check`]).
//! - `cleanroom`: the clean-room install test of the Debian package in a fresh minimal Debian
//!   12 root ([`cleanroom`]); `container-recipe`: docker/Dockerfile's instructions run in such
//!   a root, then the container's `ci/test` and `ci/bench --smoke` ([`container_recipe`]).
//!
//! Tests (in `rheap-mtr-tests`; [`steps`] runs and counts each):
//! - `mtr [ARGS]`: our mtr suite on `--engine`/`$RHEAP_ENGINE` (RHEAP by default; MEMORY must
//!   give the same results); `takeover [ARGS]`: our rheap_takeover suite; `upstream`: the
//!   upstream `heap` suite and temp-table-heavy `main` tests at the package's defaults with
//!   `--rheap-takeover=ALL`; `conformance [ARGS]`: the whole main and heap suites, stock vs
//!   plugin; `storage-engine [ARGS]`: the server's generic engine suite on RHEAP and MEMORY.
//! - `stress`, `fuzz`, `valgrind`: the stress run, the differential fuzzers, our suite under
//!   memcheck.
//! - `plugin`, `serve`: print the staged plugin; a private server with RHEAP loaded.
//! - `test`: every check, in order ([`plan`]): what ci/test runs.
//!
//! Only `dist` builds the plugin: everything else loads what it left in `target/dist`, staged
//! in `target/plugin` (`rheap_harness::plugin`), or the directory `RHEAP_PLUGIN_DIR` names.

mod cargo;
mod cleanroom;
mod container_recipe;
mod cycles;
mod dist;
mod docker_check;
mod package;
mod pgo;
mod plan;
mod root;
mod steps;
mod tally;

use anyhow::Result;
use clap::{Parser, Subcommand, ValueEnum};
use rheap_harness::{paths, plugin};
use rheap_mtr_tests::{conformance, fuzz, stress};
use std::time::Duration;
use tally::{report, Tally};

#[derive(Parser)]
#[command(
    name = "xtask",
    bin_name = "cargo xtask",
    about = "rheap's task runner: builds, checks, suites and the test plan ci/test runs",
    version
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build the plugin and put it in target/dist (ha_rheap.so and build.json). Default: a
    /// plain `cargo build --profile plugin-release -p rheap` (release, with fat LTO).
    Dist {
        /// Profile-guided build: instrumented build, a training server, then the optimised
        /// build (needs llvm-profdata: `rustup component add llvm-tools`).
        #[arg(long, conflicts_with = "failpoints")]
        pgo: bool,
        /// The test-only variant with the engine's `failpoints` feature (a debug build in
        /// target/failpoints), into target/dist/failpoints/.
        #[arg(long)]
        failpoints: bool,
    },
    /// Build the Debian package mariadb-plugin-rheap_<version>_<arch>.deb into target/package
    /// from the plugin in target/dist (run `cargo xtask dist` first), for the installed
    /// mariadb-server's exact version.
    Package,
    /// Check that no workspace crate has an import cycle between its modules (files); prints
    /// each cycle and exits 1 if there is one.
    Cycles,
    #[command(flatten)]
    Run(Run),
}

/// The commands that run suites, fuzzers and checks on the staged plugin; each prints a step
/// table and, last, `N passed, N failed, N skipped`.
#[derive(Subcommand)]
enum Run {
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
    /// Every check, in order: what ci/test runs (the plugin's two builds by `cargo xtask dist`
    /// first); the last line is `N passed, N failed, N skipped`.
    Test,
}

#[derive(Clone, Copy, ValueEnum)]
enum FuzzMode {
    Twin,
    Servers,
    Both,
}

fn main() {
    let result: Result<bool> = match Cli::parse().command {
        Command::Dist { pgo, failpoints } => {
            let kind = if failpoints {
                dist::Kind::Failpoints
            } else if pgo {
                dist::Kind::Pgo
            } else {
                dist::Kind::Plain
            };
            dist::run(kind).map(|()| true)
        }
        Command::Package => package::run().map(|_| true),
        Command::Cycles => cycles::run(&paths::workspace()),
        Command::Run(command) => run(command).map(|()| true),
    };
    match result {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("xtask: {e:#}");
            std::process::exit(1);
        }
    }
}

/// One of the [`Run`] commands.
fn run(command: Run) -> Result<()> {
    match command {
        Run::Plugin { failpoints } => {
            let dir = if failpoints {
                plugin::failpoints_dir()
            } else {
                plugin::dir()
            };
            dir.map(|d| println!("{}", d.join("ha_rheap.so").display()))
        }
        Run::Serve { smoke } => steps::serve(smoke),
        Run::Mtr { engine, mtr_args } => {
            report(&[Tally::mtr_result(
                &format!("rheap suite on {engine}"),
                steps::our_mtr(&engine, &mtr_args),
            )]);
            Ok(())
        }
        Run::Upstream { table_size_limit } => {
            let limit = match table_size_limit.as_str() {
                "HEAP" => conformance::Limit::Heap,
                _ => conformance::Limit::Actual,
            };
            report(&[Tally::mtr_result(
                &format!("upstream, rheap_takeover=ALL, rheap_table_size_limit={table_size_limit}"),
                steps::upstream_conformance(limit),
            )]);
            Ok(())
        }
        Run::Conformance {
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
        Run::Takeover { mtr_args } => {
            report(&[Tally::mtr_result(
                "rheap_takeover suite",
                steps::our_takeover_mtr(&mtr_args),
            )]);
            Ok(())
        }
        Run::StorageEngine { mtr_args } => {
            report(&[steps::storage_engine_tally(&mtr_args)]);
            Ok(())
        }
        Run::DockerCheck => {
            report(&[steps::docker_tally()]);
            Ok(())
        }
        Run::Cleanroom => {
            report(&steps::cleanroom_tallies());
            Ok(())
        }
        Run::ContainerRecipe => container_recipe::run(
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
        Run::Valgrind { mtr_args } => {
            report(&[steps::valgrind_tally(&mtr_args)]);
            Ok(())
        }
        Run::Stress { threads, secs } => {
            report(&[steps::stress_tally(stress::Config { threads, secs })]);
            Ok(())
        }
        Run::Fuzz {
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
            let tallies: Vec<Tally> = modes
                .iter()
                .map(|&m| steps::fuzz_tally(m, seed, budget))
                .collect();
            report(&tallies);
            Ok(())
        }
        Run::Test => plan::run(),
    }
}

#[cfg(test)]
mod tests {
    use super::{Cli, Command, Run};
    use clap::{CommandFactory, Parser};

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn pgo_and_failpoints_conflict() {
        assert!(Cli::try_parse_from(["xtask", "dist", "--pgo", "--failpoints"]).is_err());
        assert!(Cli::try_parse_from(["xtask", "dist", "--pgo"]).is_ok());
    }

    #[test]
    fn mtr_arguments_pass_through() {
        let cli = Cli::try_parse_from(["xtask", "mtr", "--record", "hash_index"]).unwrap();
        match cli.command {
            Command::Run(Run::Mtr { mtr_args, .. }) => {
                assert_eq!(mtr_args, ["--record", "hash_index"])
            }
            _ => panic!("not mtr"),
        }
        assert!(Cli::try_parse_from(["xtask", "stress", "--threads", "x"]).is_err());
    }
}
