//! `cargo xtask`: rheap's build tooling (the alias is in `.cargo/config.toml`).
//!
//! - `cargo xtask dist`: the plugin, a plain release build, in `target/dist/ha_rheap.so` with
//!   `target/dist/build.json` (what was built, from which commit).
//! - `cargo xtask dist --pgo`: the same from a profile-guided build ([`pgo`]).
//! - `cargo xtask dist --failpoints`: the test-only fault-injection variant, in
//!   `target/dist/failpoints/`.
//! - `cargo xtask package`: the Debian package `mariadb-plugin-rheap_<version>_<arch>.deb` in
//!   `target/package/`, from what `dist` left, for the installed server ([`package`]).
//! - `cargo xtask cycles`: fails when a crate of the workspace has an import cycle between its
//!   modules ([`cycles`]).
//!
//! Tests and the benchmark never build the plugin: they stage what `dist` left
//! (`rheap_harness::plugin`).

mod cargo;
mod cycles;
mod dist;
mod package;
mod pgo;

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "xtask",
    bin_name = "cargo xtask",
    about = "rheap's build tooling",
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
}

fn main() {
    let cli = Cli::parse();
    let result: Result<bool> = match cli.command {
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
        Command::Cycles => cycles::run(&rheap_harness::paths::workspace()),
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

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn pgo_and_failpoints_conflict() {
        use clap::Parser;
        assert!(Cli::try_parse_from(["xtask", "dist", "--pgo", "--failpoints"]).is_err());
        assert!(Cli::try_parse_from(["xtask", "dist", "--pgo"]).is_ok());
    }
}
