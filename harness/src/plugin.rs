//! The plugin directory a server loads `ha_rheap.so` from: found, or staged from what
//! `cargo xtask dist` built. Nothing here builds: a test or the benchmark never starts a build
//! (or the profile-guided build's training server) behind the caller's back.
//!
//! `cargo xtask dist` leaves the plugin in `target/dist/ha_rheap.so` (and the fault-injection
//! variant, `cargo xtask dist --failpoints`, in `target/dist/failpoints/ha_rheap.so`). The
//! server wants a plugin directory, so [`dir`] stages one: a copy of the library plus links to
//! every plugin of the installed server, so that a server pointed at it still finds its own
//! plugins (upstream tests load several).

use crate::paths;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The staged plugin directory: `RHEAP_PLUGIN_DIR` when set (and not empty), else
/// `target/plugin`, staged from `target/dist/ha_rheap.so`. Fails, saying how to build it, when
/// there is no built plugin.
pub fn dir() -> Result<PathBuf> {
    static DIR: OnceLock<std::result::Result<PathBuf, String>> = OnceLock::new();
    once(&DIR, || {
        find(
            "RHEAP_PLUGIN_DIR",
            &paths::dist().join("ha_rheap.so"),
            &paths::target().join("plugin"),
            "cargo xtask dist",
        )
    })
}

/// The staged plugin directory of the test-only variant built with the engine's `failpoints`
/// feature (it has the debug system variable `rheap_debug_fail_alloc_after`):
/// `RHEAP_FAILPOINTS_PLUGIN_DIR` when set, else `target/plugin-failpoints`, staged from
/// `target/dist/failpoints/ha_rheap.so` (`cargo xtask dist --failpoints`).
pub fn failpoints_dir() -> Result<PathBuf> {
    static DIR: OnceLock<std::result::Result<PathBuf, String>> = OnceLock::new();
    once(&DIR, || {
        find(
            "RHEAP_FAILPOINTS_PLUGIN_DIR",
            &paths::dist().join("failpoints/ha_rheap.so"),
            &paths::target().join("plugin-failpoints"),
            "cargo xtask dist --failpoints",
        )
    })
}

/// `f`'s answer, found once per process (the staged directory, or why there is none).
fn once(
    cell: &OnceLock<std::result::Result<PathBuf, String>>,
    f: impl FnOnce() -> Result<PathBuf>,
) -> Result<PathBuf> {
    cell.get_or_init(|| f().map_err(|e| format!("{e:#}")))
        .clone()
        .map_err(anyhow::Error::msg)
}

/// `$var` if set and not empty, else `built` staged into `dest`; `how` builds `built`.
fn find(var: &str, built: &Path, dest: &Path, how: &str) -> Result<PathBuf> {
    if let Some(d) = std::env::var_os(var).filter(|d| !d.is_empty()) {
        let d = PathBuf::from(d);
        if !d.join("ha_rheap.so").is_file() {
            bail!("{var}={} holds no ha_rheap.so", d.display());
        }
        return Ok(d);
    }
    if !built.is_file() {
        bail!(
            "no plugin built: run `{how}` (or set {var}); {} does not exist",
            built.display()
        );
    }
    stage(built, dest)
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
    // Copy then rename, so a server starting meanwhile never sees half a file. The temporary
    // name is this process's own: test binaries running at once may stage the same directory.
    let tmp = dest.join(format!(".ha_rheap.so.{}.tmp", std::process::id()));
    std::fs::copy(so, &tmp).with_context(|| format!("copying {}", so.display()))?;
    std::fs::rename(&tmp, dest.join("ha_rheap.so"))?;
    // What build it is (`cargo xtask dist` writes it beside the library), for the benchmark's
    // record; a staged directory never keeps another build's.
    let record = so.with_file_name("build.json");
    let staged = dest.join("build.json");
    if record.is_file() {
        let tmp = dest.join(format!(".build.json.{}.tmp", std::process::id()));
        std::fs::copy(&record, &tmp).with_context(|| format!("copying {}", record.display()))?;
        std::fs::rename(&tmp, &staged)?;
    } else if staged.exists() {
        std::fs::remove_file(&staged)?;
    }
    Ok(dest.to_path_buf())
}

/// The symbol of the shim's `st_mysql_storage_engine`: its one field is the interface version
/// the server checks at load, `MYSQL_VERSION_ID << 8` of the headers the plugin was built with.
pub const INTERFACE_SYMBOL: &str = "rheap_storage_engine";

/// Where in `image` (a built `ha_rheap.so`) the interface version is: the file offset of
/// [`INTERFACE_SYMBOL`].
pub fn interface_version_offset(image: &[u8]) -> Result<usize> {
    use object::{Object, ObjectSection, ObjectSymbol};
    let file = object::File::parse(image).context("reading the plugin as an ELF file")?;
    let sym = file
        .symbols()
        .find(|s| s.name() == Ok(INTERFACE_SYMBOL))
        .with_context(|| format!("the plugin has no symbol {INTERFACE_SYMBOL}"))?;
    let section = file.section_by_index(
        sym.section_index()
            .with_context(|| format!("{INTERFACE_SYMBOL} has no section"))?,
    )?;
    let (start, _) = section
        .file_range()
        .with_context(|| format!("{INTERFACE_SYMBOL} is not in the file"))?;
    Ok((start + sym.address() - section.address()) as usize)
}

/// The `MYSQL_VERSION_ID` (10.11.18 is 101118) of the server headers `image` was built with:
/// the only server version that loads it.
pub fn server_version_id(image: &[u8]) -> Result<u32> {
    let at = interface_version_offset(image)?;
    let bytes = image
        .get(at..at + 4)
        .context("the interface version lies past the end of the file")?;
    let version = i32::from_ne_bytes(bytes.try_into()?);
    let id = u32::try_from(version >> 8)?;
    anyhow::ensure!(
        (100000..200000).contains(&id),
        "interface version {version:#x} is not MYSQL_VERSION_ID << 8 of a MariaDB 10 or 11 server"
    );
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_build_says_how_to_make_one() {
        let dir = tempfile::tempdir().unwrap();
        let e = find(
            "RHEAP_TEST_UNSET_VARIABLE",
            &dir.path().join("dist/ha_rheap.so"),
            &dir.path().join("plugin"),
            "cargo xtask dist",
        )
        .unwrap_err();
        let msg = format!("{e:#}");
        assert!(
            msg.starts_with(
                "no plugin built: run `cargo xtask dist` (or set RHEAP_TEST_UNSET_VARIABLE)"
            ),
            "{msg}"
        );
        assert!(!dir.path().join("plugin").exists(), "nothing staged");
    }

    #[test]
    fn a_built_plugin_is_staged_with_the_servers_plugins() {
        let dir = tempfile::tempdir().unwrap();
        let so = dir.path().join("built.so");
        std::fs::write(&so, b"not really a library").unwrap();
        let staged = find(
            "RHEAP_TEST_UNSET_VARIABLE",
            &so,
            &dir.path().join("plugin"),
            "cargo xtask dist",
        )
        .unwrap();
        assert_eq!(
            std::fs::read(staged.join("ha_rheap.so")).unwrap(),
            b"not really a library"
        );
    }
}
