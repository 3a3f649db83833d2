//! The clean-room install test (`cargo xtask cleanroom`, a step of `test`): the Debian package
//! `cargo xtask package` built, installed the way a DBA would into a fresh, minimal Debian 12
//! root with Debian's own server, then used, tested with plain mysql-test-run, and removed.
//!
//! The root ([`crate::root`]) is `debootstrap --variant=minbase bookworm`, made once and copied
//! afresh for every run into `target/cleanroom/cleanroom`; every command runs in it through
//! `chroot`, as root. The server is started and stopped by Debian's own init script on its
//! standard datadir. Two settings are added to the distribution's configuration, in
//! `99-cleanroom.cnf`: `skip-networking` (the root shares this machine's network, and the
//! tests' private servers are not to meet it on port 3306) and an error-log file in place of
//! syslog, which a chroot has none of, so that the test can read what the server said. Its mmap count is taken by this machine's strace,
//! attached to the server's process, over a connection through the socket in the root.

use crate::root::{output, tail, Root, SUITE};
use anyhow::{ensure, Context, Result};
use mysql::prelude::Queryable;
use rheap_harness::{paths, syscalls};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// SHOW INDEX statements of the mmap probe.
const PROBE_STATEMENTS: usize = 200;
/// What the test adds to the distribution's configuration (see the module's comment).
const CLEANROOM_CNF: &str =
    "# Added by rheap's clean-room test: no TCP port (this root shares the \
host's network), and the error log in a file (a chroot has no syslog).\n\
[mariadb]\nskip-networking\n[mysqld_safe]\nskip_syslog\nlog_error = /var/log/mysql/error.log\n";

/// One step's outcome: its name, and what it found or why it failed.
pub struct Step {
    pub name: String,
    pub result: Result<String>,
}

/// The package to install: the `mariadb-plugin-rheap_*.deb` in `target/package` (`cargo xtask
/// package` leaves only its own there; the newest if there are several).
pub fn built_package() -> Result<PathBuf> {
    let dir = paths::target().join("package");
    let mut debs: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("mariadb-plugin-rheap_") && n.ends_with(".deb"))
        })
        .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
        .collect();
    debs.sort();
    debs.pop().map(|(_, p)| p).with_context(|| {
        format!(
            "no mariadb-plugin-rheap_*.deb in {}: build it with `cargo xtask dist && cargo xtask package`",
            dir.display()
        )
    })
}

/// Runs every step in order, printing each as it ends; stops at the first failure (what
/// follows depends on it) and returns the steps that ran.
pub fn run(deb: &Path) -> Vec<Step> {
    let mut steps = Vec::new();
    let started = Instant::now();
    let mut step = |name: &str, f: &mut dyn FnMut() -> Result<String>| -> bool {
        println!("[cleanroom] {name} ...");
        let t = Instant::now();
        let result = f();
        match &result {
            Ok(found) => println!(
                "[cleanroom] {name}: ok, {found} ({:.1?}; {:.0?} so far)",
                t.elapsed(),
                started.elapsed()
            ),
            Err(e) => println!("[cleanroom] {name}: FAILED: {e:#}"),
        }
        let ok = result.is_ok();
        steps.push(Step {
            name: name.into(),
            result,
        });
        ok
    };

    let deb_name = deb
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let server_version = match package_server_version(deb) {
        Ok(v) => v,
        Err(e) => {
            step("read the package's server version", &mut || {
                Err(anyhow::anyhow!("{e:#}"))
            });
            return steps;
        }
    };
    let mut root: Option<Room> = None;
    let ok = step(&format!("a fresh minimal {SUITE} root"), &mut || {
        let (r, how) = Root::fresh("cleanroom")?;
        root = Some(Room(r));
        Ok(how)
    });
    let Some(root) = root.filter(|_| ok) else {
        return steps;
    };
    let sql = |q: &str| root.sh(&format!("mariadb -N -B -e \"{q}\""));

    // Each step runs only if every one before it passed.
    let _all_passed = step(
        &format!("install Debian's mariadb-server {server_version} and start it (init script)"),
        &mut || {
            root.install_server(&server_version)?;
            root.service("start")?;
            Ok(format!("server {}", sql("SELECT VERSION()")?.trim()))
        },
    ) && step(
        "stock: SHOW INDEX at tmp_table_size=16G maps memory per statement",
        &mut || judged_probe(&root, Engine::Stock),
    ) && step(
        &format!("apt-get install ./{deb_name}; restart"),
        &mut || {
            let inside = root.copy_in(deb)?;
            let out = root.sh(&format!(
                "DEBIAN_FRONTEND=noninteractive apt-get install -y -q {inside}"
            ))?;
            let note = out
                .lines()
                .find(|l| l.starts_with("mariadb-plugin-rheap:"))
                .unwrap_or("")
                .to_string();
            root.service("restart")?;
            Ok(format!("postinst said: {note}"))
        },
    ) && step(
        "ENGINES shows RHEAP; an internal temporary table is rheap's",
        &mut || {
            let engine =
                sql("SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE='RHEAP'")?;
            ensure!(
                engine.trim() == "YES",
                "RHEAP's SUPPORT is '{}'",
                engine.trim()
            );
            let counter = "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS \
                       WHERE VARIABLE_NAME='RHEAP_INTERNAL_TABLES_CREATED'";
            let before: u64 = sql(counter)?.trim().parse()?;
            sql("SELECT DISTINCT a FROM (SELECT 1 a UNION ALL SELECT 2 UNION ALL SELECT 1) d")?;
            let after: u64 = sql(counter)?.trim().parse()?;
            ensure!(
                after > before,
                "Rheap_internal_tables_created stayed at {before} over a DISTINCT"
            );
            Ok(format!(
                "Rheap_internal_tables_created {before} -> {after} over one DISTINCT"
            ))
        },
    ) && step(
        "rheap: SHOW INDEX at tmp_table_size=16G maps no memory per statement",
        &mut || judged_probe(&root, Engine::Rheap),
    ) && step(
        "plain ./mtr --suite=rheap,rheap_takeover from /usr/share/mysql/mysql-test",
        &mut || root.plain_mtr(),
    ) && step(
        "apt-get remove; restart: the server starts cleanly without the plugin",
        &mut || {
            root.sh("DEBIAN_FRONTEND=noninteractive apt-get remove -y -q mariadb-plugin-rheap")?;
            let errors = root.restart_errors()?;
            ensure!(
                errors.is_empty(),
                "the error log says:\n{}",
                errors.join("\n")
            );
            let engine =
                sql("SELECT COUNT(*) FROM information_schema.ENGINES WHERE ENGINE='RHEAP'")?;
            ensure!(engine.trim() == "0", "RHEAP is still an engine");
            ensure!(
                root.path("etc/mysql/rheap.cnf").exists(),
                "remove took the conffile /etc/mysql/rheap.cnf (purge should)"
            );
            Ok("no [ERROR] in the log, no RHEAP; /etc/mysql/rheap.cnf kept".into())
        },
    ) && step("apt-get purge; restart", &mut || {
        root.sh("DEBIAN_FRONTEND=noninteractive apt-get purge -y -q mariadb-plugin-rheap")?;
        ensure!(
            !root.path("etc/mysql/rheap.cnf").exists(),
            "purge left /etc/mysql/rheap.cnf"
        );
        let errors = root.restart_errors()?;
        ensure!(
            errors.is_empty(),
            "the error log says:\n{}",
            errors.join("\n")
        );
        Ok("conffile gone, no [ERROR] in the log".into())
    });
    steps
}

/// Which engine serves the server's in-memory temporary tables.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Engine {
    Stock,
    Rheap,
}

/// The mmap probe, judged: on stock, HEAP maps and unmaps a block per statement (fewer calls
/// than one a statement would mean the probe does not see them); on rheap, less than one call
/// in twenty statements.
fn judged_probe(root: &Room, engine: Engine) -> Result<String> {
    let s = root.mmap_probe()?;
    let seen = format!(
        "{:.2} mmap+munmap per statement ({} mmap, {} munmap over {} statements)",
        s.per_statement(),
        s.mmap,
        s.munmap,
        s.statements
    );
    match engine {
        Engine::Stock => ensure!(
            s.per_statement() >= 1.0,
            "{seen} on stock: the probe does not see HEAP's blocks"
        ),
        Engine::Rheap => ensure!(s.per_statement() < 0.05, "{seen}"),
    }
    Ok(seen)
}

/// `mariadb-server (= V)` of the package's Depends.
fn package_server_version(deb: &Path) -> Result<String> {
    let out = output(
        Command::new("dpkg-deb")
            .args(["-f"])
            .arg(deb)
            .arg("Depends"),
    )?;
    out.split(',')
        .find_map(|d| {
            d.trim()
                .strip_prefix("mariadb-server (= ")?
                .strip_suffix(')')
        })
        .map(str::to_string)
        .with_context(|| {
            format!(
                "{} does not depend on one mariadb-server version: {out}",
                deb.display()
            )
        })
}

/// The root the clean room runs in, with the server's service stopped when it goes.
struct Room(Root);

impl std::ops::Deref for Room {
    type Target = Root;
    fn deref(&self) -> &Root {
        &self.0
    }
}

impl Drop for Room {
    fn drop(&mut self) {
        // Stopped as a DBA would; the root then kills whatever is left.
        let _ = self.service("stop");
    }
}

impl Room {
    /// Installs Debian's mariadb-server (and mariadb-test, for mtr) at `version`, the one the
    /// package depends on, as a DBA who wants that release would: with apt, pinning the
    /// server's source package to it. The maintainer scripts cannot start the service (a
    /// chroot has no init system); [`Root::service`] does.
    fn install_server(&self, version: &str) -> Result<()> {
        std::fs::write(
            self.path("etc/apt/preferences.d/mariadb"),
            format!("Package: src:mariadb\nPin: version {version}\nPin-Priority: 1001\n"),
        )?;
        self.sh(
            "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
             mariadb-server mariadb-client mariadb-test",
        )?;
        let got = self.sh("dpkg-query -W -f='${Version}' mariadb-server")?;
        ensure!(
            got == version,
            "apt installed mariadb-server {got}, not {version}"
        );
        std::fs::write(
            self.path("etc/mysql/mariadb.conf.d/99-cleanroom.cnf"),
            CLEANROOM_CNF,
        )?;
        self.sh("mkdir -p /var/log/mysql && chown mysql:adm /var/log/mysql")?;
        Ok(())
    }

    /// `/etc/init.d/mariadb <action>`, Debian's own init script.
    fn service(&self, action: &str) -> Result<String> {
        self.sh(&format!("/etc/init.d/mariadb {action}"))
    }

    /// Restarts the server; the `[ERROR]` lines it logged from this start on.
    fn restart_errors(&self) -> Result<Vec<String>> {
        let log = self.path("var/log/mysql/error.log");
        let before = std::fs::metadata(&log).map_or(0, |m| m.len() as usize);
        self.service("restart")?;
        let text = std::fs::read(&log).with_context(|| format!("reading {}", log.display()))?;
        Ok(String::from_utf8_lossy(&text[before.min(text.len())..])
            .lines()
            .filter(|l| l.contains("[ERROR]"))
            .map(str::to_string)
            .collect())
    }

    /// mmap + munmap per SHOW INDEX at tmp_table_size = max_heap_table_size = 16G, counted by
    /// this machine's strace on the root's server, over a connection through its socket.
    fn mmap_probe(&self) -> Result<syscalls::Syscalls> {
        let pid: u32 = std::fs::read_to_string(self.path("run/mysqld/mysqld.pid"))
            .context("the server's pid file")?
            .trim()
            .parse()?;
        let socket = self.path("run/mysqld/mysqld.sock");
        let opts = mysql::OptsBuilder::new()
            .socket(Some(socket.display().to_string()))
            .user(Some("root"));
        let mut conn = mysql::Conn::new(opts)
            .with_context(|| format!("connecting through {}", socket.display()))?;
        conn.query_drop("CREATE DATABASE IF NOT EXISTS cleanroom")?;
        conn.query_drop(
            "CREATE TABLE IF NOT EXISTS cleanroom.t (a INT PRIMARY KEY, b INT, KEY (b)) ENGINE=InnoDB",
        )?;
        conn.query_drop("SET SESSION max_heap_table_size = 16 * 1024 * 1024 * 1024")?;
        conn.query_drop("SET SESSION tmp_table_size = 16 * 1024 * 1024 * 1024")?;
        // One round first: what a first statement sets up once is not per statement.
        conn.query_drop("SHOW INDEX FROM cleanroom.t")?;
        let statements = vec!["SHOW INDEX FROM cleanroom.t".to_string(); PROBE_STATEMENTS];
        syscalls::count(pid, &mut conn, &statements)
    }

    /// Plain mysql-test-run of our installed suites, as a MariaDB developer runs it.
    fn plain_mtr(&self) -> Result<String> {
        let out = self
            .command(
                "/bin/sh",
                &[
                    "-c",
                    &format!(
                        "cd /usr/share/mysql/mysql-test && ./mtr --suite={} --parallel=2 \
                         --force 2>&1",
                        paths::PACKAGED_SUITES.join(",")
                    ),
                ],
            )
            .output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let outcomes: Vec<(String, &str)> = text
            .lines()
            .filter_map(rheap_mtr_tests::mtr::outcome)
            .map(|(n, o)| (n.to_string(), o))
            .collect();
        let count = |o: &str| outcomes.iter().filter(|(_, x)| *x == o).count();
        let summary = text
            .lines()
            .rev()
            .find(|l| l.starts_with("Completed:") || l.starts_with("Failed "))
            .unwrap_or("(no summary line)")
            .to_string();
        // Every test of the two suites passes: none fails, and none is skipped (a suite that
        // cannot find the installed plugin skips every test).
        let tests = paths::PACKAGED_SUITES
            .iter()
            .map(|s| rheap_mtr_tests::mtr::test_files(&paths::suites().join(s)))
            .sum::<Result<usize>>()?;
        ensure!(
            out.status.success() && count("fail") == 0 && count("pass") == tests,
            "mtr exited {}: {} passed, {} failed, {} skipped of {tests}; {summary}\n{}",
            out.status,
            count("pass"),
            count("fail"),
            count("skipped"),
            tail(&text, 40)
        );
        Ok(format!(
            "{} passed, {} skipped: \"{summary}\"",
            count("pass"),
            count("skipped")
        ))
    }
}
