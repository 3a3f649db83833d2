//! A server with rheap serving internal temporary tables, and one connection whose OS thread
//! the test binds to a CPU of its choice (`taskset` on the thread id that performance_schema
//! gives): what rheap keeps per CPU (core/src/recycle/pool.rs) can then be tested CPU by CPU.

use crate::server::{Options, Server};
use anyhow::{anyhow, Result};
use mysql::prelude::Queryable;
use mysql::Conn;

/// The server, its connection, and the connection's OS thread.
pub struct Pinned {
    /// Held so that the server runs as long as the test does (it stops when dropped).
    pub server: Server,
    pub conn: Conn,
    tid: u64,
}

impl Pinned {
    /// A server with `rheap_takeover=INTERNAL` and performance_schema, and a connection to it.
    pub fn start() -> Result<Pinned> {
        let mut opts = Options::with_plugin_loaded()?;
        opts.args.push("--rheap-takeover=INTERNAL".into());
        opts.args.push("--performance-schema=ON".into());
        let server = Server::start(opts)?;
        let mut conn = server.conn()?;
        let tid: u64 = conn
            .query_first(
                "SELECT THREAD_OS_ID FROM performance_schema.threads \
                 WHERE PROCESSLIST_ID = CONNECTION_ID()",
            )?
            .ok_or_else(|| anyhow!("no OS thread id for this connection"))?;
        Ok(Pinned { server, conn, tid })
    }

    /// Binds the connection's thread to `cpu`: its next statement runs there.
    pub fn pin(&self, cpu: usize) -> Result<()> {
        duct::cmd!("taskset", "-p", "-c", cpu.to_string(), self.tid.to_string())
            .stdout_null()
            .run()?;
        Ok(())
    }

    /// Internal temporary tables rheap served so far, and how many of them a kept table
    /// served (read with the takeover off, so that the reading's own temporary table is
    /// HEAP's and moves neither).
    pub fn served_and_reused(&mut self) -> Result<(u64, u64)> {
        let c = &mut self.conn;
        c.query_drop("SET GLOBAL rheap_takeover = OFF")?;
        let read = |c: &mut Conn, name: &str| -> Result<u64> {
            c.query_first::<u64, _>(format!(
                "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS \
                 WHERE VARIABLE_NAME = '{name}'"
            ))?
            .ok_or_else(|| anyhow!("no status variable {name}"))
        };
        let served = read(c, "RHEAP_INTERNAL_TABLES_CREATED")?;
        let reused = read(c, "RHEAP_INTERNAL_TABLES_REUSED")?;
        c.query_drop("SET GLOBAL rheap_takeover = INTERNAL")?;
        Ok((served, reused))
    }

    /// Runs `statements` on `cpu`; returns the tables served meanwhile, and how many of them a
    /// kept table served.
    pub fn run_on(&mut self, cpu: usize, statements: &[String]) -> Result<(u64, u64)> {
        self.pin(cpu)?;
        let before = self.served_and_reused()?;
        for s in statements {
            self.conn.query_drop(s)?;
        }
        let after = self.served_and_reused()?;
        Ok((after.0 - before.0, after.1 - before.1))
    }
}

/// The CPUs this process may run on, from /proc/self/status ("0-3,8,10-11").
pub fn allowed_cpus() -> Result<Vec<usize>> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .ok_or_else(|| anyhow!("no Cpus_allowed_list in /proc/self/status"))?;
    let mut cpus = Vec::new();
    for range in list.trim().split(',') {
        let (lo, hi) = range.split_once('-').unwrap_or((range, range));
        cpus.extend(lo.parse::<usize>()?..=hi.parse::<usize>()?);
    }
    Ok(cpus)
}
