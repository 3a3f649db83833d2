//! `cargo xtask package`: the Debian package `mariadb-plugin-rheap_<version>_<arch>.deb`, in
//! `target/package/`, from the plugin `cargo xtask dist` left in `target/dist` (it builds
//! nothing), laid out as Debian's own `mariadb-plugin-<name>` packages are:
//!
//! - `/usr/lib/mysql/plugin/ha_rheap.so`, the server's plugin directory;
//! - `/etc/mysql/rheap.cnf`, a conffile: `[mariadb]` with `plugin_load_add = ha_rheap.so` and
//!   every `rheap_*` variable, commented, at its default. The server reads it through the link
//!   `/etc/mysql/mariadb.conf.d/60-rheap.cnf`, a plain file of the package: `apt remove` takes
//!   the link away (the server then starts without the plugin and without an error about a
//!   missing library) and keeps the DBA's edits in the conffile; `apt purge` removes both;
//! - `/usr/share/mysql/mysql-test/plugin/rheap/{rheap,rheap_takeover}`, our mtr suites where
//!   mysql-test-run looks for an installed plugin's suites (with `rheap_suppressions.pl`, which
//!   their `suite.pm` reads), so that `./mtr --suite=rheap` runs
//!   from `/usr/share/mysql/mysql-test` (package mariadb-test);
//! - `Depends: mariadb-server (= <the Debian version installed here>)`: a storage engine loads
//!   only into the server release whose headers it was built with. The package is refused when
//!   the plugin's interface version is not that server's.
//!
//! The package's version is the workspace's with the server's upstream version after a `+`
//! (`0.1.0+mariadb10.11.18`), so that builds for two server releases differ.

use anyhow::{bail, ensure, Context, Result};
use rheap_harness::process::output;
use rheap_harness::{paths, plugin};
use std::fmt::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The binary package's name, after Debian's `mariadb-plugin-<name>`.
pub const NAME: &str = "mariadb-plugin-rheap";
/// Where Debian's server loads plugins from (`mariadbd --verbose --help`: plugin-dir).
const PLUGIN_DIR: &str = "usr/lib/mysql/plugin";
/// The conffile, outside the directories the server reads.
const CONFFILE: &str = "etc/mysql/rheap.cnf";
/// The link the server reads it through (`!includedir /etc/mysql/mariadb.conf.d/`).
const CONF_LINK: &str = "etc/mysql/mariadb.conf.d/60-rheap.cnf";
/// Where mysql-test-run looks for an installed plugin's suites (`mysql-test/plugin/*/<suite>`).
const SUITES_DIR: &str = "usr/share/mysql/mysql-test/plugin/rheap";
const MAINTAINER: &str = "rheap developers <maintainers@users.noreply.a-seed-744200b6.example>";

/// The server a package is built for: the Debian package version (`1:10.11.18-0+deb12u1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerVersion {
    pub debian: String,
}

impl ServerVersion {
    /// The upstream release: `1:10.11.18-0+deb12u1` → `10.11.18`, `1:11.8.9+ds-0+deb13u1` →
    /// `11.8.9` (no epoch, Debian revision or repack suffix).
    pub fn upstream(&self) -> &str {
        let v = self
            .debian
            .split_once(':')
            .map_or(&*self.debian, |(_, v)| v);
        let v = v.rsplit_once('-').map_or(v, |(u, _)| u);
        v.split(['+', '~']).next().unwrap_or(v)
    }

    /// `MYSQL_VERSION_ID` of the upstream release (10.11.18 → 101118).
    pub fn version_id(&self) -> Result<u32> {
        let n: Vec<u32> = self
            .upstream()
            .split('.')
            .map(str::parse)
            .collect::<Result<_, _>>()
            .with_context(|| format!("server version {} is not N.N.N-…", self.debian))?;
        match n[..] {
            [major, minor, patch] => Ok(major * 10000 + minor * 100 + patch),
            _ => bail!("server version {} is not N.N.N-…", self.debian),
        }
    }
}

/// The package's version: `<workspace version>+mariadb<server upstream version>`.
pub fn package_version(server: &ServerVersion) -> String {
    format!("{}+mariadb{}", env!("CARGO_PKG_VERSION"), server.upstream())
}

/// Builds the package and returns its path.
pub fn run() -> Result<PathBuf> {
    let dist = paths::dist();
    let so = dist.join("ha_rheap.so");
    let image = std::fs::read(&so).with_context(|| {
        format!(
            "no plugin in {}: build it first with `cargo xtask dist`",
            dist.display()
        )
    })?;
    let server = ServerVersion {
        debian: output(Command::new("dpkg-query").args(["-W", "-f=${Version}", "mariadb-server"]))
            .map(|v| v.trim().to_string())
            .context("the installed mariadb-server's version (is it installed? ci/setup does)")?,
    };
    let built_for = plugin::server_version_id(&image)?;
    ensure!(
        built_for == server.version_id()?,
        "{} was built for MYSQL_VERSION_ID {built_for}, but the installed server is {} \
         ({}): rebuild it with `cargo xtask dist` against this server's headers",
        so.display(),
        server.debian,
        server.version_id()?
    );
    let arch = output(Command::new("dpkg").arg("--print-architecture"))?
        .trim()
        .to_string();
    let version = package_version(&server);

    let out = paths::target().join("package");
    // Only this build's package is left here, so that whatever installs "the" package in
    // target/package (the clean-room test) cannot take an older one.
    for entry in std::fs::read_dir(&out).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(&format!("{NAME}_")) && name.ends_with(".deb") {
            std::fs::remove_file(entry.path())?;
        }
    }
    let root = out.join("root");
    if root.exists() {
        std::fs::remove_dir_all(&root)?;
    }
    let file = |rel: &str, bytes: &[u8], mode: u32| -> Result<()> {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().context("a file in a directory")?)?;
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))?;
        Ok(())
    };
    let so_in_package = format!("{PLUGIN_DIR}/ha_rheap.so");
    file(&so_in_package, &image, 0o644)?;
    // As Debian's packages ship binaries: without debug information (the symbols stay).
    output(
        Command::new("objcopy")
            .arg("--strip-debug")
            .arg(root.join(&so_in_package)),
    )?;
    file(CONFFILE, conffile().as_bytes(), 0o644)?;
    let link = root.join(CONF_LINK);
    std::fs::create_dir_all(link.parent().context("a directory")?)?;
    std::os::unix::fs::symlink("../rheap.cnf", &link)?;
    let suppressions = paths::mtr_suppressions();
    let read = std::fs::read(&suppressions)
        .with_context(|| format!("reading {}", suppressions.display()))?;
    file(
        &format!(
            "{SUITES_DIR}/{}",
            suppressions
                .file_name()
                .context("a file")?
                .to_string_lossy()
        ),
        &read,
        0o644,
    )?;
    for suite in paths::PACKAGED_SUITES {
        copy_tree(
            &paths::suites().join(suite),
            &root.join(SUITES_DIR).join(suite),
        )?;
    }
    let doc = format!("usr/share/doc/{NAME}");
    file(&format!("{doc}/copyright"), copyright().as_bytes(), 0o644)?;
    if let Ok(record) = std::fs::read(dist.join("build.json")) {
        file(&format!("{doc}/build.json"), &record, 0o644)?;
    }

    let installed_kib = tree_size(&root)?.div_ceil(1024);
    file(
        "DEBIAN/control",
        control(&version, &arch, &server, installed_kib).as_bytes(),
        0o644,
    )?;
    file(
        "DEBIAN/conffiles",
        format!("/{CONFFILE}\n").as_bytes(),
        0o644,
    )?;
    file("DEBIAN/postinst", POSTINST.as_bytes(), 0o755)?;

    let deb = out.join(format!("{NAME}_{version}_{arch}.deb"));
    let status = Command::new("dpkg-deb")
        .args(["--root-owner-group", "-Zxz", "--build"])
        .arg(&root)
        .arg(&deb)
        .status()
        .context("running dpkg-deb (package dpkg)")?;
    ensure!(status.success(), "dpkg-deb --build failed");
    println!(
        "[xtask] {} (for mariadb-server {}, plugin built for MYSQL_VERSION_ID {built_for})",
        deb.display(),
        server.debian
    );
    Ok(deb)
}

fn control(version: &str, arch: &str, server: &ServerVersion, installed_kib: u64) -> String {
    format!(
        "Package: {NAME}\n\
         Source: rheap\n\
         Version: {version}\n\
         Architecture: {arch}\n\
         Maintainer: {MAINTAINER}\n\
         Installed-Size: {installed_kib}\n\
         Depends: mariadb-server (= {debian}), libc6, libgcc-s1, libstdc++6\n\
         Suggests: mariadb-test (= {debian})\n\
         Section: database\n\
         Priority: optional\n\
         Description: RHEAP storage engine for MariaDB: in-memory temporary tables\n \
         rheap is a HEAP-compatible in-memory storage engine written in Rust. Loaded\n \
         into the server, it serves the server's internal temporary tables (GROUP BY,\n \
         DISTINCT, UNION, SHOW INDEX, SHOW FULL COLUMNS, ...) from small reused memory\n \
         blocks, so a large tmp_table_size costs nothing per statement, and stores\n \
         rows, BLOB and TEXT included, at their real length. ENGINE=RHEAP tables\n \
         behave as ENGINE=MEMORY ones.\n \
         .\n \
         Built for MariaDB {upstream} only: the server refuses a storage engine built\n \
         against another release's headers. /etc/mysql/rheap.cnf loads it; restart\n \
         the server after installing.\n",
        debian = server.debian,
        upstream = server.upstream(),
    )
}

/// The conffile: loads the plugin, and shows every variable at its default.
fn conffile() -> String {
    let mut s = String::from(
        "# rheap: in-memory temporary tables for MariaDB (package mariadb-plugin-rheap).\n\
         # The server reads this file through /etc/mysql/mariadb.conf.d/60-rheap.cnf;\n\
         # removing the package removes that link, purging it removes this file.\n\
         # Restart the server after a change. The variables are described in\n\
         # /usr/share/doc/mariadb-plugin-rheap and by SHOW VARIABLES LIKE 'rheap%'.\n\
         [mariadb]\n\
         plugin_load_add = ha_rheap.so\n\n\
         # The defaults:\n",
    );
    for (name, default, what) in VARIABLES {
        let _ = writeln!(s, "# {what}\n#loose_{name} = {default}");
    }
    s
}

/// The variables the conffile shows: name, default, what it does (README.md, Reference).
const VARIABLES: &[(&str, &str, &str)] = &[
    (
        "rheap_takeover",
        "INTERNAL",
        "Which of MEMORY's tables rheap serves: OFF, INTERNAL (internal temporary tables), ALL.",
    ),
    (
        "rheap_takeover_information_schema",
        "ON",
        "Also serve the information_schema tables with BLOB/TEXT columns (SHOW FULL COLUMNS).",
    ),
    (
        "rheap_takeover_blob_tables",
        "ON",
        "Also serve a statement's internal tables with BLOB/TEXT/JSON columns (GROUP BY, DISTINCT, ...).",
    ),
    (
        "rheap_block_cache_size",
        "16M",
        "Bytes of free blocks kept for reuse, server-wide.",
    ),
    (
        "rheap_max_memory",
        "1G",
        "Bytes all rheap tables may hold together (0: no limit).",
    ),
    (
        "rheap_table_size_limit",
        "ACTUAL",
        "What makes a table full: ACTUAL (the bytes rheap holds) or HEAP (MEMORY's bytes).",
    ),
];

fn copyright() -> String {
    "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\
     Upstream-Name: rheap\n\n\
     Files: *\n\
     Copyright: the rheap developers\n\
     License: GPL-2\n \
     On Debian systems, the full text of the GNU General Public License\n \
     version 2 can be found in the file `/usr/share/common-licenses/GPL-2'.\n"
        .to_string()
}

/// Tells the DBA what installing did; loads nothing itself (the restart does).
const POSTINST: &str = "#!/bin/sh\n\
set -e\n\
if [ \"$1\" = configure ]; then\n\
  echo \"mariadb-plugin-rheap: restart the MariaDB server to load rheap (/etc/mysql/rheap.cnf).\"\n\
fi\n";

/// Copies the regular files under `from` into `to` (modes 0644 and directories 0755, as a
/// package wants them whatever the checkout's umask).
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755))?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type()?.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).with_context(|| format!("copying {}", src.display()))?;
            std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(0o644))?;
        }
    }
    Ok(())
}

/// Bytes of the regular files under `dir`.
fn tree_size(dir: &Path) -> Result<u64> {
    let mut n = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            n += tree_size(&entry.path())?;
        } else if kind.is_file() {
            n += entry.metadata()?.len();
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_versions_parse() {
        let v = ServerVersion {
            debian: "1:10.11.18-0+deb12u1".into(),
        };
        assert_eq!(v.upstream(), "10.11.18");
        assert_eq!(v.version_id().unwrap(), 101118);
        assert_eq!(
            package_version(&v),
            format!("{}+mariadb10.11.18", env!("CARGO_PKG_VERSION"))
        );
        let trixie = ServerVersion {
            debian: "1:11.8.9+ds-0+deb13u1".into(),
        };
        assert_eq!(trixie.upstream(), "11.8.9");
        assert_eq!(trixie.version_id().unwrap(), 110809);
        let odd = ServerVersion {
            debian: "10.11".into(),
        };
        assert!(odd.version_id().is_err());
    }

    #[test]
    fn the_conffile_loads_the_plugin_and_names_every_variable() {
        let text = conffile();
        assert!(text.contains("[mariadb]\nplugin_load_add = ha_rheap.so\n"));
        for (name, default, _) in VARIABLES {
            assert!(text.contains(&format!("#loose_{name} = {default}\n")));
        }
    }

    #[test]
    fn every_variable_shown_is_in_the_readme_reference_with_its_default() {
        let readme = std::fs::read_to_string(paths::workspace().join("README.md")).unwrap();
        for (name, default, _) in VARIABLES {
            let row = readme
                .lines()
                .find(|l| l.starts_with(&format!("| `{name}` |")))
                .unwrap_or_else(|| panic!("{name} has no row in README.md's reference"));
            assert!(
                row.split('|').nth(3).is_some_and(|d| d.contains(default)),
                "README.md gives another default for {name} than {default}: {row}"
            );
        }
    }
}
