//! The plugin directory the tests load `ha_rheap.so` from.
//!
//! cargo names the cdylib `librheap.so`; the server wants `ha_rheap.so` in its plugin
//! directory. [`dir`] builds the plugin (release profile, profile-guided: see [`pgo`]), and
//! stages a directory holding it plus links to every plugin of the installed server, so that a
//! server pointed at it still finds its own plugins (upstream tests load several).

use crate::{layout, paths, pgo};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The staged plugin directory. `RHEAP_PLUGIN_DIR` names a ready one and skips the build.
pub fn dir() -> Result<PathBuf> {
    static DIR: OnceLock<std::result::Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(|| {
        if let Some(d) = std::env::var_os("RHEAP_PLUGIN_DIR") {
            return Ok(PathBuf::from(d));
        }
        build()
            .and_then(|so| stage(&so, &paths::target().join("plugin")))
            .map_err(|e| format!("{e:#}"))
    })
    .clone()
    .map_err(anyhow::Error::msg)
}

/// Builds the plugin and returns the library: profile-guided ([`pgo`]) when the toolchain has
/// `llvm-profdata`, then laid out by BOLT ([`layout`]) when `llvm-bolt` is installed; else
/// without the step that cannot be taken, saying why.
pub fn build() -> Result<PathBuf> {
    let lib = match pgo::tool() {
        Ok(tool) => pgo::build(&tool)?,
        Err(why) => {
            eprintln!("[plugin] plain release build, without a profile or a layout step: {why}");
            return plain_build();
        }
    };
    match layout::tool() {
        Ok(bolt) => layout::optimise(&bolt, &lib),
        Err(why) => {
            eprintln!("[plugin] no layout step, the library as linked: {why}");
            Ok(lib)
        }
    }
}

/// `cargo build --release -p rheap`; returns the built library.
pub fn plain_build() -> Result<PathBuf> {
    cargo(|c| c.args(["build", "--release", "-p", "rheap"]))?;
    Ok(paths::target().join("release/librheap.so"))
}

/// Runs the cargo that runs us (`CARGO`, else the one on PATH) in the workspace, with the
/// arguments `args` gives it; fails, naming the command, unless it exits 0.
pub fn cargo(args: impl FnOnce(&mut Command) -> &mut Command) -> Result<()> {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    args(&mut c).current_dir(paths::workspace());
    let status = c.status().with_context(|| format!("running {c:?}"))?;
    if !status.success() {
        bail!("{c:?} failed ({status})");
    }
    Ok(())
}

/// The staged plugin directory of the test-only variant built with the engine's `failpoints`
/// feature (it has the debug system variable `rheap_debug_fail_alloc_after`):
/// `target/plugin-failpoints`. `RHEAP_FAILPOINTS_PLUGIN_DIR` names a ready one.
///
/// It is a debug build (debug assertions on) in its own target directory,
/// `target/failpoints`: cargo names a cdylib without a hash, so building it beside the
/// release plugin would overwrite that one's library at every switch of features.
pub fn failpoints_dir() -> Result<PathBuf> {
    static DIR: OnceLock<std::result::Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(|| {
        if let Some(d) = std::env::var_os("RHEAP_FAILPOINTS_PLUGIN_DIR") {
            return Ok(PathBuf::from(d));
        }
        let target = paths::target().join("failpoints");
        let build = || -> Result<PathBuf> {
            cargo(|c| {
                c.args(["build", "-p", "rheap", "--features", "failpoints"])
                    .arg("--target-dir")
                    .arg(&target)
            })?;
            stage(
                &target.join("debug/librheap.so"),
                &paths::target().join("plugin-failpoints"),
            )
        };
        build().map_err(|e| format!("{e:#}"))
    })
    .clone()
    .map_err(anyhow::Error::msg)
}

/// Makes `dest` hold `ha_rheap.so` (a copy of `so`) and links to the server's own plugins.
pub fn stage(so: &Path, dest: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(dest)?;
    let server = paths::server_plugin_dir();
    for entry in
        std::fs::read_dir(&server).with_context(|| format!("reading {}", server.display()))?
    {
        let entry = entry?;
        let link = dest.join(entry.file_name());
        if std::fs::symlink_metadata(&link).is_err() {
            std::os::unix::fs::symlink(entry.path(), &link)?;
        }
    }
    // Copy then rename, so a server starting meanwhile never sees half a file.
    let tmp = dest.join(".ha_rheap.so.tmp");
    std::fs::copy(so, &tmp).with_context(|| format!("copying {}", so.display()))?;
    std::fs::rename(&tmp, dest.join("ha_rheap.so"))?;
    Ok(dest.to_path_buf())
}
