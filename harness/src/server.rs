//! A private `mariadbd` for one test: its own datadir, socket and error log in a temporary
//! directory, no TCP port. Dropping a [`Server`] stops the process and removes the directory,
//! also when the test fails or panics.

use crate::{paths, plugin};
use anyhow::{bail, Context, Result};
use mysql::prelude::Queryable;
use mysql::{Conn, OptsBuilder};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a server may take to start or stop before the test fails.
const START_TIMEOUT: Duration = Duration::from_secs(120);
const STOP_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug)]
pub struct Server {
    dir: tempfile::TempDir,
    handle: Option<duct::Handle>,
    mariadbd: PathBuf,
    args: Vec<String>,
    pub plugin_dir: PathBuf,
}

/// What a server starts with.
#[derive(Debug, Clone)]
pub struct Options {
    /// Point `--plugin-dir` at the staged directory with ha_rheap.so.
    pub plugin_dir: Option<PathBuf>,
    /// Extra `mariadbd` options, e.g. `--plugin-load-add=ha_rheap.so`.
    pub args: Vec<String>,
    /// The server binary.
    pub mariadbd: PathBuf,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            plugin_dir: None,
            args: Vec::new(),
            mariadbd: paths::mariadbd(),
        }
    }
}

impl Options {
    /// The staged plugin directory ([`plugin::dir`]: found, never built); the plugin is not
    /// loaded.
    pub fn with_plugin_dir() -> Result<Options> {
        Ok(Options {
            plugin_dir: Some(plugin::dir()?),
            ..Options::default()
        })
    }

    /// As [`with_plugin_dir`](Self::with_plugin_dir), and loaded at start-up.
    pub fn with_plugin_loaded() -> Result<Options> {
        let mut o = Options::with_plugin_dir()?;
        o.args.push("--plugin-load-add=ha_rheap.so".into());
        Ok(o)
    }
}

impl Server {
    /// Starts a server with the plugin directory staged, and `INSTALL SONAME 'ha_rheap'` done.
    pub fn with_rheap() -> Result<Server> {
        let s = Server::start(Options::with_plugin_dir()?)?;
        s.conn()?.query_drop("INSTALL SONAME 'ha_rheap'")?;
        Ok(s)
    }

    pub fn start(opts: Options) -> Result<Server> {
        let dir = tempfile::Builder::new().prefix("rheap-server-").tempdir()?;
        let data = dir.path().join("data");
        let tmp = dir.path().join("tmp");
        std::fs::create_dir_all(&tmp)?;
        // A private tmpdir for the bootstrap too: concurrent bootstraps sharing /tmp collide on
        // their temporary table names.
        let common = [
            "--no-defaults".to_string(),
            format!("--datadir={}", data.display()),
            format!("--tmpdir={}", tmp.display()),
        ];
        let small = ["--innodb-log-file-size=8M", "--innodb-buffer-pool-size=16M"];
        let install = duct::cmd(
            "mariadb-install-db",
            common.iter().map(String::as_str).chain(small).chain([
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                "--user=root",
            ]),
        )
        .stderr_to_stdout()
        .stdout_capture()
        .unchecked()
        .run()
        .context("running mariadb-install-db (package mariadb-server)")?;
        if !install.status.success() {
            bail!(
                "mariadb-install-db failed:\n{}",
                String::from_utf8_lossy(&install.stdout)
            );
        }
        let mut args: Vec<String> = common.to_vec();
        args.extend(small.map(String::from));
        args.extend([
            format!("--socket={}", dir.path().join("sock").display()),
            format!("--pid-file={}", dir.path().join("pid").display()),
            format!("--log-error={}", dir.path().join("error.log").display()),
            "--skip-networking".into(),
            "--user=root".into(),
        ]);
        let plugin_dir = opts
            .plugin_dir
            .clone()
            .unwrap_or_else(paths::server_plugin_dir);
        args.push(format!("--plugin-dir={}", plugin_dir.display()));
        args.extend(opts.args.iter().cloned());
        let mut server = Server {
            dir,
            handle: None,
            mariadbd: opts.mariadbd,
            args,
            plugin_dir,
        };
        server.launch()?;
        Conn::new(server.opts(None))?.query_drop("CREATE DATABASE IF NOT EXISTS test")?;
        Ok(server)
    }

    fn launch(&mut self) -> Result<()> {
        let handle = duct::cmd(&self.mariadbd, &self.args)
            .stdout_null()
            .stderr_null()
            .unchecked()
            .start()
            .with_context(|| format!("starting {}", self.mariadbd.display()))?;
        self.handle = Some(handle);
        self.wait_ready()
    }

    /// A clean shutdown and a start on the same datadir (installed plugins stay installed,
    /// as on a real server).
    pub fn restart(&mut self) -> Result<()> {
        if !self.stop()? {
            bail!(
                "mariadbd did not shut down cleanly; error log:\n{}",
                self.error_log()
            );
        }
        self.launch()
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.path().join("sock")
    }

    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("error.log")).unwrap_or_default()
    }

    fn opts(&self, db: Option<&str>) -> OptsBuilder {
        OptsBuilder::new()
            .socket(Some(self.socket().display().to_string()))
            .user(Some("root"))
            .db_name(db)
            .prefer_socket(true)
    }

    /// A new connection, with `test` as the default database.
    pub fn conn(&self) -> Result<Conn> {
        Ok(Conn::new(self.opts(Some("test")))?)
    }

    /// A new connection as `user` (of `localhost`) with `password`, no default database.
    pub fn conn_as(&self, user: &str, password: &str) -> Result<Conn> {
        Ok(Conn::new(
            self.opts(None).user(Some(user)).pass(Some(password)),
        )?)
    }

    /// The `mariadbd` process id while it runs (for /proc and strace).
    pub fn pid(&self) -> Option<u32> {
        self.handle.as_ref().and_then(|h| h.pids().first().copied())
    }

    /// Whether the process is still running.
    pub fn is_running(&self) -> bool {
        self.handle
            .as_ref()
            .is_some_and(|h| matches!(h.try_wait(), Ok(None)))
    }

    /// Waits until the server answers on its socket, or fails with its error log.
    fn wait_ready(&self) -> Result<()> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if !self.is_running() {
                bail!(
                    "mariadbd exited during start-up; error log:\n{}",
                    self.error_log()
                );
            }
            if self.socket().exists() {
                if let Ok(mut c) = Conn::new(self.opts(None)) {
                    if c.query_drop("SELECT 1").is_ok() {
                        return Ok(());
                    }
                }
            }
            if Instant::now() > deadline {
                bail!(
                    "mariadbd did not answer within {START_TIMEOUT:?}; error log:\n{}",
                    self.error_log()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops the server with SIGTERM (a clean shutdown) and returns whether it exited cleanly.
    pub fn stop(&mut self) -> Result<bool> {
        let Some(handle) = self.handle.take() else {
            return Ok(true);
        };
        for pid in handle.pids() {
            // SAFETY: kill(2) on a child process id we started; no memory is involved.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
        }
        match handle.wait_timeout(STOP_TIMEOUT)? {
            Some(out) => Ok(out.status.success()),
            None => {
                handle.kill()?;
                bail!("mariadbd did not stop within {STOP_TIMEOUT:?}");
            }
        }
    }

    /// The server's private directory (datadir, socket, error log).
    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    /// The server's `--tmpdir`, its own.
    pub fn tmp_dir(&self) -> PathBuf {
        self.dir.path().join("tmp")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(h) = self.handle.take() {
            let _ = h.kill();
            let _ = h.wait();
        }
    }
}
