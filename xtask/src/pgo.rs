//! The plugin's profile-guided build (PGO).
//!
//! ha_rheap.so runs between the server's own code for every row it stores or finds, so what a
//! row costs there is as much instruction-cache misses as instructions. A profile of a
//! representative run lets LLVM lay the hot paths out densely, inline where it pays and move
//! cold code out of their way. [`build`] takes three steps, each in a directory of its own under
//! `target/pgo` (so none of them rebuilds another's dependencies):
//! 1. an instrumented build (`-Cprofile-generate` in `RUSTFLAGS` for the host target, so that
//!    the core, the plugin crate and their dependencies are counted, and build scripts not);
//! 2. a training run: a private server loads that library with `rheap_takeover=INTERNAL`, runs
//!    `pgo/setup.sql` once and `pgo/pass.sql` [`PASSES`] times, and writes the counts when it
//!    shuts down; `llvm-profdata` merges them into `target/pgo/rheap.profdata`;
//! 3. the optimised build (`-Cprofile-use`), which `cargo xtask dist --pgo` puts in
//!    `target/dist`.
//!
//! Training runs again only when the instrumented library changed (the hash it was made from is
//! kept beside the profile). The training statements are ours, not the benchmark's: the
//! temporary tables of GROUP BY, DISTINCT, UNION, derived tables and SHOW, and an explicit RHEAP
//! table's indexes.
//!
//! `llvm-profdata` must come from the toolchain's own LLVM (rustup's `llvm-tools` component,
//! which ci/setup installs). Without it [`tool`] says why, and `dist --pgo` fails with that
//! (the default `cargo xtask dist` is a plain release build).

use crate::cargo::{cargo_build_with, PROFILE};
use anyhow::{bail, Context, Result};
use mysql::prelude::Queryable;
use rheap_harness::server::{Options, Server};
use rheap_harness::{paths, plugin, sql};
use std::path::{Path, PathBuf};
use std::process::Command;

/// How many times the training run repeats `pgo/pass.sql`.
pub const PASSES: usize = 20;

const SETUP: &str = include_str!("../pgo/setup.sql");
const PASS: &str = include_str!("../pgo/pass.sql");

/// The toolchain's `llvm-profdata`, or why the build goes without a profile.
pub fn tool() -> std::result::Result<PathBuf, String> {
    let ask = |args: &[&str]| rustc(args).map_err(|e| format!("{e:#}"));
    let sysroot = ask(&["--print", "sysroot"])?;
    let tool = Path::new(sysroot.trim())
        .join("lib/rustlib")
        .join(host().map_err(|e| format!("{e:#}"))?)
        .join("bin/llvm-profdata");
    if tool.is_file() {
        Ok(tool)
    } else {
        Err(format!(
            "no {} (`rustup component add llvm-tools` installs it; ci/setup does)",
            tool.display()
        ))
    }
}

/// The three steps above; returns the optimised library.
pub fn build(tool: &Path) -> Result<PathBuf> {
    let dir = paths::target().join("pgo");
    std::fs::create_dir_all(&dir)?;
    // One build at a time.
    let _lock = Lock::take(&dir.join("lock"))?;
    let raw = dir.join("raw");
    let profile = dir.join("rheap.profdata");
    let stamp = dir.join("trained-from");

    step("1/3 instrumented build (target/pgo/generate)");
    let generate = flag("-Cprofile-generate=", &raw);
    let instrumented = plugin_build(&dir.join("generate"), &generate)?;
    let made_from = format!("{:016x}", hash_file(&instrumented)?);
    if profile.is_file() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(&made_from) {
        step("2/3 training: the profile is up to date (instrumented library unchanged)");
    } else {
        step(&format!(
            "2/3 training: a private server runs pgo/setup.sql and pgo/pass.sql {PASSES} times"
        ));
        let _ = std::fs::remove_dir_all(&raw);
        train(&instrumented, &dir.join("plugin"))?;
        merge(tool, &raw, &profile)?;
        std::fs::write(&stamp, &made_from)?;
    }

    step("3/3 optimised build with target/pgo/rheap.profdata (target/pgo/use)");
    plugin_build(&dir.join("use"), &flag("-Cprofile-use=", &profile))
}

fn step(what: &str) {
    println!("[xtask] profile-guided build {what}");
}

fn flag(name: &str, path: &Path) -> String {
    format!("{name}{}", path.display())
}

/// `cargo build --profile plugin-release -p rheap --lib` in `target_dir`, with `flag` for every
/// crate of the plugin (the core's code is most of what a row runs through). The host target is
/// named, so that `RUSTFLAGS` reach the plugin's crates and not build scripts, which would
/// otherwise write counts of their own.
fn plugin_build(target_dir: &Path, flag: &str) -> Result<PathBuf> {
    let target = target_dir.display().to_string();
    let host = host()?;
    let args = [
        "build",
        "--profile",
        PROFILE,
        "-p",
        "rheap",
        "--lib",
        "--target",
        &host,
        "--target-dir",
        &target,
    ];
    cargo_build_with(&args, Some(flag))?;
    Ok(target_dir.join(&host).join(PROFILE).join("librheap.so"))
}

/// What the toolchain's `rustc ARGS` prints (`RUSTC`, else the one on PATH).
fn rustc(args: &[&str]) -> Result<String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(&rustc)
        .args(args)
        .output()
        .with_context(|| format!("running {rustc} {}", args.join(" ")))?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The host's target triple (`rustc -vV`).
fn host() -> Result<String> {
    rustc(&["-vV"])?
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(|h| h.trim().to_string())
        .context("`rustc -vV` names no host")
}

/// Loads `instrumented` into a private server, runs the training statements, shuts the server
/// down cleanly (the plugin writes its counts then).
fn train(instrumented: &Path, plugin_dir: &Path) -> Result<()> {
    let mut server = Server::start(Options {
        plugin_dir: Some(plugin::stage(instrumented, plugin_dir)?),
        args: vec![
            "--plugin-load-add=ha_rheap.so".into(),
            "--rheap-takeover=INTERNAL".into(),
        ],
        ..Default::default()
    })?;
    run_training(&mut server, PASSES)
}

/// Runs the training statements on `server` (`pgo/setup.sql`, then `pgo/pass.sql` `passes`
/// times) and shuts it down cleanly, which is when an instrumented plugin writes what it
/// counted.
fn run_training(server: &mut Server, passes: usize) -> Result<()> {
    let mut conn = server.conn()?;
    let pass = sql::statements(PASS);
    for statement in sql::statements(SETUP)
        .iter()
        .chain((0..passes).flat_map(|_| pass.iter()))
    {
        conn.query_drop(statement)
            .with_context(|| format!("training statement `{statement}`"))?;
    }
    drop(conn);
    if !server.stop()? {
        bail!(
            "the training server did not shut down cleanly; error log:\n{}",
            server.error_log()
        );
    }
    Ok(())
}

/// `llvm-profdata merge` of what the training run wrote in `raw`.
fn merge(tool: &Path, raw: &Path, profile: &Path) -> Result<()> {
    let written = std::fs::read_dir(raw).map(|d| d.count()).unwrap_or(0);
    if written == 0 {
        bail!("the training run wrote no profile into {}", raw.display());
    }
    let status = Command::new(tool)
        .arg("merge")
        .arg("-o")
        .arg(profile)
        .arg(raw)
        .status()
        .with_context(|| format!("running {}", tool.display()))?;
    if !status.success() {
        bail!("{} merge failed ({status})", tool.display());
    }
    Ok(())
}

fn hash_file(path: &Path) -> Result<u64> {
    use std::hash::{Hash, Hasher};
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    Ok(h.finish())
}

/// An exclusive `flock` on a file, released when dropped (or when the process dies).
struct Lock {
    _file: std::fs::File,
}

impl Lock {
    fn take(path: &Path) -> Result<Lock> {
        use std::os::fd::AsRawFd;
        let file = std::fs::File::create(path)?;
        // SAFETY: flock(2) on a descriptor this function owns; no memory is involved.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
            bail!(
                "locking {}: {}",
                path.display(),
                std::io::Error::last_os_error()
            );
        }
        Ok(Lock { _file: file })
    }
}
