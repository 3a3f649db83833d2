//! The systems under test, one adapter each, and a configuration: a system at one
//! tmp_table_size, running as a private server with the benchmark schema loaded.

use crate::schema::Schema;
use anyhow::{bail, Context, Result};
use mysql::prelude::Queryable;
use mysql::Conn;
use rheap_mtr_tests::server::{Options, Server};
use rheap_mtr_tests::sql;

/// A server set-up whose throughput is measured.
pub trait SystemUnderTest: Send + Sync {
    /// Short name, used in the report and on the command line.
    fn name(&self) -> &'static str;
    /// What it is, one line.
    fn about(&self) -> &'static str;
    /// How its server starts (before the size options).
    fn options(&self) -> Result<Options>;
    /// Fails unless the running server really is this system.
    fn verify(&self, conn: &mut Conn) -> Result<()>;
    /// Whether rheap serves the server's internal in-memory temp tables.
    fn takes_over(&self) -> bool {
        false
    }
}

/// Stock MariaDB, no plugin: internal in-memory temp tables are HEAP's.
pub struct StockHeap;

impl SystemUnderTest for StockHeap {
    fn name(&self) -> &'static str {
        "stock"
    }
    fn about(&self) -> &'static str {
        "stock mariadbd, no plugin: in-memory temp tables on HEAP"
    }
    fn options(&self) -> Result<Options> {
        Ok(Options::default())
    }
    fn verify(&self, conn: &mut Conn) -> Result<()> {
        if sql::rheap_available(conn)? {
            bail!("the stock server has RHEAP loaded");
        }
        Ok(())
    }
}

/// The plugin loaded, `rheap_takeover=INTERNAL`: internal in-memory temp tables are rheap's.
pub struct Rheap;

impl SystemUnderTest for Rheap {
    fn name(&self) -> &'static str {
        "rheap"
    }
    fn about(&self) -> &'static str {
        "mariadbd with ha_rheap.so loaded, rheap_takeover=INTERNAL"
    }
    fn options(&self) -> Result<Options> {
        with_plugin("INTERNAL")
    }
    fn verify(&self, conn: &mut Conn) -> Result<()> {
        verify_plugin(conn, "INTERNAL")
    }
    fn takes_over(&self) -> bool {
        true
    }
}

/// The plugin loaded, `rheap_takeover=OFF`: internal temp tables stay HEAP's. Against
/// `stock`, what loading the plugin costs; against `rheap`, what taking over gains.
pub struct RheapOff;

impl SystemUnderTest for RheapOff {
    fn name(&self) -> &'static str {
        "rheap-off"
    }
    fn about(&self) -> &'static str {
        "mariadbd with ha_rheap.so loaded, rheap_takeover=OFF: temp tables on HEAP"
    }
    fn options(&self) -> Result<Options> {
        with_plugin("OFF")
    }
    fn verify(&self, conn: &mut Conn) -> Result<()> {
        verify_plugin(conn, "OFF")
    }
}

/// Another build of rheap (`rheap_takeover=INTERNAL`), loaded from the plugin directory named
/// by `RHEAP_B_PLUGIN_DIR`: two builds compared in one run, e.g. before and after a change
/// (copy `target/plugin` aside with `cp -a`, change, rebuild).
pub struct RheapB;

impl SystemUnderTest for RheapB {
    fn name(&self) -> &'static str {
        "rheap-b"
    }
    fn about(&self) -> &'static str {
        "mariadbd with the ha_rheap.so of RHEAP_B_PLUGIN_DIR, rheap_takeover=INTERNAL"
    }
    fn options(&self) -> Result<Options> {
        let dir = std::env::var_os("RHEAP_B_PLUGIN_DIR")
            .context("set RHEAP_B_PLUGIN_DIR to the plugin directory of the build to compare")?;
        let mut o = with_plugin("INTERNAL")?;
        o.plugin_dir = Some(dir.into());
        Ok(o)
    }
    fn verify(&self, conn: &mut Conn) -> Result<()> {
        verify_plugin(conn, "INTERNAL")
    }
    fn takes_over(&self) -> bool {
        true
    }
}

/// A server with ha_rheap.so loaded and `rheap_takeover=takeover`.
fn with_plugin(takeover: &str) -> Result<Options> {
    let mut o = Options::with_plugin_loaded()?;
    o.args.push(format!("--rheap-takeover={takeover}"));
    Ok(o)
}

/// Fails unless RHEAP is loaded with `rheap_takeover=takeover`.
fn verify_plugin(conn: &mut Conn, takeover: &str) -> Result<()> {
    if !sql::rheap_available(conn)? {
        bail!("RHEAP is not available");
    }
    let mode: Option<String> = conn.query_first("SELECT @@global.rheap_takeover")?;
    if mode.as_deref() != Some(takeover) {
        bail!("rheap_takeover is {mode:?}, not {takeover}");
    }
    Ok(())
}

/// Stock MariaDB with `tmp_memory_table_size=0`: every internal temp table is Aria's.
pub struct StockAria;

impl SystemUnderTest for StockAria {
    fn name(&self) -> &'static str {
        "stock-aria"
    }
    fn about(&self) -> &'static str {
        "stock mariadbd, tmp_memory_table_size=0: every temp table on Aria"
    }
    fn options(&self) -> Result<Options> {
        let mut o = Options::default();
        o.args.push("--tmp-memory-table-size=0".into());
        Ok(o)
    }
    fn verify(&self, conn: &mut Conn) -> Result<()> {
        let size: Option<u64> = conn.query_first("SELECT @@global.tmp_memory_table_size")?;
        if size != Some(0) {
            bail!("tmp_memory_table_size is {size:?}, not 0");
        }
        StockHeap.verify(conn)
    }
}

/// Every adapter; the first is the baseline the ratios divide by.
pub fn all() -> Vec<Box<dyn SystemUnderTest>> {
    vec![
        Box::new(StockHeap),
        Box::new(Rheap),
        Box::new(RheapOff),
        Box::new(RheapB),
        Box::new(StockAria),
    ]
}

pub fn by_name(name: &str) -> Option<Box<dyn SystemUnderTest>> {
    all().into_iter().find(|s| s.name() == name)
}

/// [`by_name`], or an error that lists the names there are (for command lines).
pub fn named(name: &str) -> Result<Box<dyn SystemUnderTest>> {
    by_name(name).ok_or_else(|| {
        let names: Vec<&str> = all().iter().map(|s| s.name()).collect();
        anyhow::anyhow!("no system {name:?}; there are {}", names.join(", "))
    })
}

/// `tmp_table_size` = `max_heap_table_size` for one configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size(pub &'static str);

pub const SIZES: [Size; 2] = [Size("16M"), Size("16G")];

/// One system at one size, running.
pub struct Configuration {
    pub system: Box<dyn SystemUnderTest>,
    pub size: Size,
    pub server: Server,
    /// The highest peak resident set of the server's earlier processes (before restarts).
    earlier_peak_rss: Option<u64>,
}

impl Configuration {
    /// `stock 16M`, `rheap 16G`, ...
    pub fn label(&self) -> String {
        label(self.system.name(), self.size)
    }

    /// Starts the server, checks it is the system it claims, and loads the schema.
    pub fn start(system: Box<dyn SystemUnderTest>, size: Size, schema: &Schema) -> Result<Self> {
        Self::start_with(system, size, schema, |_| {})
    }

    /// [`start`](Self::start), with the server's options changed by `adjust` last (e.g. the
    /// binary, to run it under a profiler).
    pub fn start_with(
        system: Box<dyn SystemUnderTest>,
        size: Size,
        schema: &Schema,
        adjust: impl FnOnce(&mut Options),
    ) -> Result<Self> {
        let mut opts = system.options()?;
        opts.args.extend([
            format!("--tmp-table-size={}", size.0),
            format!("--max-heap-table-size={}", size.0),
            // Loading the schema is not what is measured: skip the log flush per commit.
            "--innodb-flush-log-at-trx-commit=0".into(),
            "--max-connections=200".into(),
        ]);
        adjust(&mut opts);
        let server = Server::start(opts)
            .with_context(|| format!("starting {}", label(system.name(), size)))?;
        let mut c = server.conn()?;
        system
            .verify(&mut c)
            .with_context(|| format!("checking {}", label(system.name(), size)))?;
        for s in schema.load_sql() {
            c.query_drop(&s)
                .with_context(|| format!("loading the schema: {s}"))?;
        }
        // Statistics as of the load, on every server alike.
        for t in &schema.tables {
            c.query_drop(format!("ANALYZE TABLE `{}`", t.name))?;
        }
        Ok(Configuration {
            system,
            size,
            server,
            earlier_peak_rss: None,
        })
    }

    /// A clean shutdown of the server and a new process on the same datadir, checked again.
    pub fn restart(&mut self) -> Result<()> {
        self.earlier_peak_rss = self.peak_rss();
        self.server
            .restart()
            .with_context(|| format!("restarting {}", self.label()))?;
        self.system
            .verify(&mut self.conn()?)
            .with_context(|| format!("checking {} after its restart", self.label()))
    }

    pub fn conn(&self) -> Result<Conn> {
        self.server.conn()
    }

    /// The server's peak resident set so far (`VmHWM`), in bytes: the highest of its
    /// processes' when it was restarted.
    pub fn peak_rss(&self) -> Option<u64> {
        let now = (|| {
            let pid = self.server.pid()?;
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
            let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
            let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kb * 1024)
        })();
        now.max(self.earlier_peak_rss)
    }
}

pub fn label(system: &str, size: Size) -> String {
    format!("{system} {}", size.0)
}
