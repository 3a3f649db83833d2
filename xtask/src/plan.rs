//! `cargo xtask test`, what ci/test runs: every check and suite in order, with progress, the
//! plugin built twice at the start (release and failpoints) and never again; the last line is
//! `N passed, N failed, N skipped` over everything that ran.

use crate::steps::{
    cleanroom_tallies, docker_tally, fuzz_tally, our_mtr, our_takeover_mtr, storage_engine_tally,
    stress_tally, upstream_conformance,
};
use crate::tally::Tally;
use crate::tally::{cargo_tally, report};
use anyhow::{bail, Result};
use rheap_harness::{paths, plugin, process};
use rheap_mtr_tests::{conformance, fuzz, stress};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The seed and the time per mode of the fuzzer's run in `test` (`cargo xtask fuzz` runs longer,
/// from any seed).
const CI_FUZZ_SEED: u64 = 20261202;
const CI_FUZZ_BUDGET: Duration = Duration::from_secs(45);
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

/// One step of `test`: its title, and what it runs, giving its tallies.
type Step<'a> = (&'static str, Box<dyn FnOnce() -> Result<Vec<Tally>> + 'a>);

pub fn run() -> Result<()> {
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
            "stress, short: 8 clients for 8 s (the full run: cargo xtask stress)",
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

#[cfg(test)]
mod tests {
    #[test]
    fn plugin_builds_count_xtask_build_lines() {
        let out = "[xtask] cargo build --release -p rheap\n   Compiling rheap v0.1.0\n\
                   [xtask] cargo build, as: cargo rustc --release -p rheap --lib\n\
                   [xtask] target/dist/ha_rheap.so\n";
        assert_eq!(super::plugin_builds(out), 2);
    }
}
