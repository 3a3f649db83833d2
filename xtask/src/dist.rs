//! `cargo xtask dist`: builds the plugin and leaves it, renamed to what the server loads, in
//! `target/dist` with a `build.json` saying what it is:
//!
//! ```json
//! {"build":"plain","profile":"release","commit":"<git rev-parse HEAD>","dirty":false,"features":[]}
//! ```
//!
//! (`commit` and `dirty` are null outside a git checkout, e.g. in the Docker image.) Every
//! cargo command that builds the plugin is printed as a line starting `[xtask] cargo build`,
//! so that a log can count the builds.

use crate::cargo::{cargo_build, PROFILE};
use crate::pgo;
use anyhow::{Context, Result};
use rheap_harness::paths;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Which build `dist` makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `cargo build --profile plugin-release -p rheap` (the release profile with fat LTO).
    Plain,
    /// The profile-guided build ([`pgo`]).
    Pgo,
    /// The test-only variant with the engine's `failpoints` feature: a debug build (debug
    /// assertions on) in its own target directory, `target/failpoints` (cargo names a cdylib
    /// without a hash, so building it beside the release plugin would overwrite that one's
    /// library at every switch of features).
    Failpoints,
}

pub fn run(kind: Kind) -> Result<()> {
    let (lib, out_dir, features): (PathBuf, PathBuf, &[&str]) = match kind {
        Kind::Plain => {
            cargo_build(&["build", "--profile", PROFILE, "-p", "rheap"])?;
            (
                paths::target().join(PROFILE).join("librheap.so"),
                paths::dist(),
                &[],
            )
        }
        Kind::Pgo => {
            // The user asked for a profile: no silent fallback to a plain build.
            let tool = pgo::tool().map_err(|why| {
                anyhow::anyhow!(
                    "no profile-guided build: {why} (`cargo xtask dist` builds without one)"
                )
            })?;
            (pgo::build(&tool)?, paths::dist(), &[])
        }
        Kind::Failpoints => {
            let target = paths::target().join("failpoints");
            let target = target.display().to_string();
            cargo_build(&[
                "build",
                "-p",
                "rheap",
                "--features",
                "failpoints",
                "--target-dir",
                &target,
            ])?;
            (
                Path::new(&target).join("debug/librheap.so"),
                paths::dist().join("failpoints"),
                &["failpoints"],
            )
        }
    };
    let so = install(&lib, &out_dir)?;
    let record = record(kind, features);
    write_atomic(
        &out_dir.join("build.json"),
        format!("{record}\n").as_bytes(),
    )?;
    println!("[xtask] {} ({record})", so.display());
    Ok(())
}

/// What `build.json` says.
fn record(kind: Kind, features: &[&str]) -> serde_json::Value {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .args(args)
            .current_dir(paths::workspace())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let commit = git(&["rev-parse", "HEAD"]);
    let dirty = commit
        .as_ref()
        .and_then(|_| git(&["status", "--porcelain"]))
        .map(|s| !s.is_empty());
    serde_json::json!({
        "build": if kind == Kind::Pgo { "pgo" } else { "plain" },
        "profile": if kind == Kind::Failpoints { "debug" } else { PROFILE },
        "commit": commit,
        "dirty": dirty,
        "features": features,
    })
}

/// Copies `lib` to `dir/ha_rheap.so` (through a temporary name and a rename: a server starting
/// meanwhile never sees half a file); returns the new path.
fn install(lib: &Path, dir: &Path) -> Result<PathBuf> {
    let bytes = std::fs::read(lib).with_context(|| format!("reading {}", lib.display()))?;
    let so = dir.join("ha_rheap.so");
    write_atomic(&so, &bytes)?;
    Ok(so)
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().context("a path with a directory")?;
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().context("a file name")?.to_string_lossy();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))?;
    Ok(())
}
