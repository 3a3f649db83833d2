//! Running cargo for a build of the plugin, printed so that a log can count the builds.

use anyhow::{bail, Context, Result};
use rheap_harness::paths;
use std::process::Command;

/// Runs `cargo ARGS` in the workspace (the cargo that runs us: `CARGO`, else the one on PATH),
/// printing it first as `[xtask] cargo ARGS`; fails unless it exits 0. `args` must build the
/// plugin (`build` or `rustc`): the printed line is what a log counts builds by.
pub fn cargo_build(args: &[&str]) -> Result<()> {
    let line = args.join(" ");
    if args.first() == Some(&"build") {
        println!("[xtask] cargo {line}");
    } else {
        println!("[xtask] cargo build, as: cargo {line}");
    }
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.args(args).current_dir(paths::workspace());
    let status = c.status().with_context(|| format!("running {c:?}"))?;
    if !status.success() {
        bail!("`cargo {line}` failed ({status})");
    }
    Ok(())
}
