//! Running cargo for a build of the plugin, printed so that a log can count the builds.

use anyhow::{bail, Context, Result};
use rheap_harness::paths;
use std::process::Command;

/// The cargo profile of the plugin as shipped (the workspace's Cargo.toml: release, with fat
/// LTO across the core and the plugin crate).
pub const PROFILE: &str = "plugin-release";

/// Runs `cargo ARGS` in the workspace (the cargo that runs us: `CARGO`, else the one on PATH),
/// printing it first as `[xtask] cargo ARGS`; fails unless it exits 0. `args` must build the
/// plugin (`build` or `rustc`): the printed line is what a log counts builds by.
pub fn cargo_build(args: &[&str]) -> Result<()> {
    cargo_build_with(args, None)
}

/// As [`cargo_build`], with `rustflags` (`RUSTFLAGS`) for every crate it compiles, when given.
pub fn cargo_build_with(args: &[&str], rustflags: Option<&str>) -> Result<()> {
    let line = args.join(" ");
    let env = rustflags.map_or(String::new(), |f| format!("RUSTFLAGS={f} "));
    if args.first() == Some(&"build") {
        println!("[xtask] {env}cargo {line}");
    } else {
        println!("[xtask] cargo build, as: {env}cargo {line}");
    }
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.args(args).current_dir(paths::workspace());
    if let Some(f) = rustflags {
        c.env("RUSTFLAGS", f);
    }
    let status = c.status().with_context(|| format!("running {c:?}"))?;
    if !status.success() {
        bail!("`cargo {line}` failed ({status})");
    }
    Ok(())
}
