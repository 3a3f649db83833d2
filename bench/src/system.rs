//! The systems under test, one adapter each, and a configuration: a system at one
//! tmp_table_size, running as a private server with the benchmark schema loaded.

use crate::schema::Schema;
use anyhow::{bail, Context, Result};
use mysql::prelude::Queryable;
use mysql::Conn;
use rheap_harness::server::{Options, Server};
use rheap_harness::sql;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// A server set-up whose throughput is measured.
pub trait SystemUnderTest: Send + Sync {
    /// Short name, used in the report and on the command line.
    fn name(&self) -> &'static str;
    /// What it is, one line.
    fn about(&self) -> &'static str;
    /// How its server starts (before the size options).
    fn options(&self) -> Result<Options>;
    /// The size options: `tmp_table_size` = `max_heap_table_size` = `size`.
    fn size_args(&self, size: Size) -> Vec<String> {
        vec![
            format!("--tmp-table-size={}", size.0),
            format!("--max-heap-table-size={}", size.0),
        ]
    }
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
/// by an environment variable: builds compared in one run, e.g. before and after a change
/// (`rheap-b` from `RHEAP_B_PLUGIN_DIR`: copy `target/dist` aside with `cp -a`, change,
/// rebuild), or a plain build against a profile-guided one (`rheap-c` from
/// `RHEAP_C_PLUGIN_DIR`).
pub struct OtherBuild {
    name: &'static str,
    about: &'static str,
    var: &'static str,
}

/// `rheap-b`.
pub const RHEAP_B: OtherBuild = OtherBuild {
    name: "rheap-b",
    about: "mariadbd with the ha_rheap.so of RHEAP_B_PLUGIN_DIR, rheap_takeover=INTERNAL",
    var: "RHEAP_B_PLUGIN_DIR",
};

/// `rheap-c`.
pub const RHEAP_C: OtherBuild = OtherBuild {
    name: "rheap-c",
    about: "mariadbd with the ha_rheap.so of RHEAP_C_PLUGIN_DIR, rheap_takeover=INTERNAL",
    var: "RHEAP_C_PLUGIN_DIR",
};

impl SystemUnderTest for OtherBuild {
    fn name(&self) -> &'static str {
        self.name
    }
    fn about(&self) -> &'static str {
        self.about
    }
    fn options(&self) -> Result<Options> {
        let dir = std::env::var_os(self.var).with_context(|| {
            format!(
                "set {} to the plugin directory of the build to compare",
                self.var
            )
        })?;
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
/// `tmp_table_size` is the same variable on 10.11 (an alias), so the size sets only
/// `max_heap_table_size` (what MEMORY tables may hold).
pub struct StockAria;

impl SystemUnderTest for StockAria {
    fn name(&self) -> &'static str {
        "stock-aria"
    }
    fn about(&self) -> &'static str {
        "stock mariadbd, tmp_memory_table_size=0: every temp table on Aria"
    }
    fn options(&self) -> Result<Options> {
        Ok(Options::default())
    }
    fn size_args(&self, size: Size) -> Vec<String> {
        vec![
            "--tmp-memory-table-size=0".into(),
            format!("--max-heap-table-size={}", size.0),
        ]
    }
    fn verify(&self, conn: &mut Conn) -> Result<()> {
        StockHeap.verify(conn)?;
        let size: Option<u64> = conn.query_first("SELECT @@global.tmp_memory_table_size")?;
        if size != Some(0) {
            bail!("tmp_memory_table_size is {size:?}, not 0");
        }
        // A statement that builds internal temp tables (a derived table, a GROUP BY, even
        // one asking for a small result) builds every one on disk.
        conn.query_drop("FLUSH STATUS")?;
        conn.query_drop(
            "SELECT SQL_SMALL_RESULT a, COUNT(*) FROM \
             (SELECT 1 AS a UNION SELECT 2 UNION SELECT 3) AS d GROUP BY a",
        )?;
        let made = sql::session_status(conn, "Created_tmp_tables")?;
        let disk = sql::session_status(conn, "Created_tmp_disk_tables")?;
        if made == 0 || disk != made {
            bail!("{disk} of {made} internal temp tables on disk, not all");
        }
        Ok(())
    }
}

/// Stock MariaDB with its tmpdir on tmpfs (`/dev/shm`): the Aria tables it makes for BLOB
/// columns are files in memory. Against `stock`, what the file system costs of those tables;
/// against `rheap`, what is left of Aria's cost without it.
pub struct StockTmpfs;

impl SystemUnderTest for StockTmpfs {
    fn name(&self) -> &'static str {
        "stock-tmpfs"
    }
    fn about(&self) -> &'static str {
        "stock mariadbd, tmpdir on tmpfs (/dev/shm): on-disk temp tables in memory files"
    }
    fn options(&self) -> Result<Options> {
        let dir = Path::new("/dev/shm").join(format!("rheap-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).with_context(|| format!("making {}", dir.display()))?;
        let mut o = Options::default();
        o.args.push(format!("--tmpdir={}", dir.display()));
        Ok(o)
    }
    fn verify(&self, conn: &mut Conn) -> Result<()> {
        StockHeap.verify(conn)?;
        let dir: Option<String> = conn.query_first("SELECT @@global.tmpdir")?;
        if !dir.as_deref().is_some_and(|d| d.starts_with("/dev/shm/")) {
            bail!("tmpdir is {dir:?}, not under /dev/shm");
        }
        Ok(())
    }
}

/// Every adapter; the first is the baseline the ratios divide by.
pub fn all() -> Vec<Box<dyn SystemUnderTest>> {
    vec![
        Box::new(StockHeap),
        Box::new(Rheap),
        Box::new(RheapOff),
        Box::new(RHEAP_B),
        Box::new(RHEAP_C),
        Box::new(StockAria),
        Box::new(StockTmpfs),
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

/// The command lines' parser of a system's name ([`all`]'s names, each with its `about` in
/// `--help`; any other name is an error that lists them).
pub fn arg_parser() -> impl clap::builder::TypedValueParser<Value = String> {
    clap::builder::PossibleValuesParser::new(
        all()
            .iter()
            .map(|s| clap::builder::PossibleValue::new(s.name()).help(s.about())),
    )
}

/// The file beside `ha_rheap.so` in a plugin directory that says which build it is (written by
/// `cargo xtask dist`).
pub const BUILD_RECORD: &str = "build.json";

/// Which build of ha_rheap.so a system ran: its plugin directory's [`BUILD_RECORD`],
/// `{"build":"plain"|"pgo","commit":"<sha>","dirty":bool,"features":[...]}`, or
/// `{"build":"unknown"}` when the directory has none (builds from before the record).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Build {
    /// `plain` or `pgo`; `unknown` when there was no record, and then no other field.
    pub build: String,
    /// The commit it was built from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Whether the work tree had changes the commit does not hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty: Option<bool>,
    /// The cargo features it was built with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub features: Option<Vec<String>>,
}

impl Build {
    /// What is known of a build without a record.
    pub fn unknown() -> Build {
        Build {
            build: "unknown".into(),
            commit: None,
            dirty: None,
            features: None,
        }
    }

    /// The record in `plugin_dir`: [`unknown`](Self::unknown) when there is none, an error
    /// naming the file when it cannot be read or is not a build record.
    pub fn read(plugin_dir: &Path) -> Result<Build> {
        let path = plugin_dir.join(BUILD_RECORD);
        match std::fs::read_to_string(&path) {
            Ok(text) => Build::parse(&text).with_context(|| {
                format!(
                    "{} is not a build record: {{\"build\":\"plain\"|\"pgo\",\"commit\":\"<sha>\",\
                     \"dirty\":true|false,\"features\":[...]}}",
                    path.display()
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Build::unknown()),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// A record's text: every field there, of its type, and `build` one of the two kinds.
    pub fn parse(text: &str) -> Result<Build> {
        #[derive(Deserialize)]
        #[serde(rename_all = "lowercase")]
        enum Kind {
            Plain,
            Pgo,
        }
        /// A field that must be there, and may be null.
        fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
            d: D,
        ) -> Result<Option<T>, D::Error> {
            Option::<T>::deserialize(d)
        }
        // `commit` and `dirty` are null for a build outside a git checkout (the Docker image's).
        #[derive(Deserialize)]
        struct Record {
            build: Kind,
            #[serde(deserialize_with = "present")]
            commit: Option<String>,
            #[serde(deserialize_with = "present")]
            dirty: Option<bool>,
            features: Vec<String>,
        }
        let r: Record = serde_json::from_str(text)?;
        if r.commit.as_deref() == Some("") {
            bail!("its commit is empty");
        }
        Ok(Build {
            build: match r.build {
                Kind::Plain => "plain",
                Kind::Pgo => "pgo",
            }
            .into(),
            commit: r.commit,
            dirty: r.dirty,
            features: Some(r.features),
        })
    }
}

/// `plain build of 3f86118`, `pgo build of abc1234 (dirty; features: a, b)`, `plain build
/// outside a git checkout`, `unknown build (no build.json)`.
impl fmt::Display for Build {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.features.is_none() {
            return write!(f, "{} build (no {BUILD_RECORD})", self.build);
        }
        match &self.commit {
            Some(commit) => write!(
                f,
                "{} build of {}",
                self.build,
                commit.get(..7).unwrap_or(commit)
            )?,
            None => write!(f, "{} build outside a git checkout", self.build)?,
        }
        let mut notes = Vec::new();
        if self.dirty == Some(true) {
            notes.push("dirty".to_string());
        }
        if let Some(features) = self.features.as_ref().filter(|f| !f.is_empty()) {
            notes.push(format!("features: {}", features.join(", ")));
        }
        if !notes.is_empty() {
            write!(f, " ({})", notes.join("; "))?;
        }
        Ok(())
    }
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
    /// The plugin build it runs ([`Build::read`] of its plugin directory); None for a system
    /// without one of its own (the stock ones).
    pub build: Option<Build>,
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
        opts.args.extend(system.size_args(size));
        opts.args.extend([
            // Loading the schema is not what is measured: skip the log flush per commit.
            "--innodb-flush-log-at-trx-commit=0".into(),
            "--max-connections=200".into(),
            // The blog's tables (crate::blog, about 20 MB) stay in memory: a statement reads
            // no page from disk, as on a server sized for its data.
            "--innodb-buffer-pool-size=128M".into(),
        ]);
        adjust(&mut opts);
        let build = opts
            .plugin_dir
            .as_deref()
            .map(Build::read)
            .transpose()
            .with_context(|| format!("the plugin build of {}", label(system.name(), size)))?;
        let server = Server::start(opts)
            .with_context(|| format!("starting {}", label(system.name(), size)))?;
        let mut c = server.conn()?;
        system
            .verify(&mut c)
            .with_context(|| format!("checking {}", label(system.name(), size)))?;
        for s in schema.load_sql().into_iter().chain(crate::blog::load_sql()) {
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
            build,
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
        let now = self.server.pid().and_then(|pid| proc_status(pid, "VmHWM:"));
        now.max(self.earlier_peak_rss)
    }
}

/// A size in bytes from `/proc/PID/status` (`field` with its colon, e.g. `VmHWM:`).
pub fn proc_status(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

pub fn label(system: &str, size: Size) -> String {
    format!("{system} {}", size.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory holding `build.json` with `record`, if any.
    fn plugin_dir(name: &str, record: Option<&str>) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("rheap-bench-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        if let Some(r) = record {
            std::fs::write(dir.join(BUILD_RECORD), r).unwrap();
        }
        dir
    }

    #[test]
    fn a_build_record_is_read_beside_the_plugin() {
        let dir = plugin_dir(
            "present",
            Some(r#"{"build":"pgo","commit":"abc1234def","dirty":true,"features":[]}"#),
        );
        let b = Build::read(&dir).unwrap();
        assert_eq!(b.build, "pgo");
        assert_eq!(b.commit.as_deref(), Some("abc1234def"));
        assert_eq!(b.to_string(), "pgo build of abc1234 (dirty)");
        let json = serde_json::to_string(&b).unwrap();
        assert_eq!(
            json,
            r#"{"build":"pgo","commit":"abc1234def","dirty":true,"features":[]}"#
        );
        let plain = Build::parse(
            r#"{"build":"plain","commit":"3f86118","dirty":false,"features":["x","y"],"more":1}"#,
        )
        .unwrap();
        assert_eq!(plain.to_string(), "plain build of 3f86118 (features: x, y)");
        // Outside a git checkout (the Docker image) `cargo xtask dist` writes nulls.
        let no_git =
            Build::parse(r#"{"build":"plain","commit":null,"dirty":null,"features":[]}"#).unwrap();
        assert_eq!(no_git.to_string(), "plain build outside a git checkout");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn without_a_build_record_the_build_is_unknown() {
        let dir = plugin_dir("missing", None);
        let b = Build::read(&dir).unwrap();
        assert_eq!(b, Build::unknown());
        assert_eq!(serde_json::to_string(&b).unwrap(), r#"{"build":"unknown"}"#);
        assert_eq!(b.to_string(), "unknown build (no build.json)");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_malformed_build_record_is_an_error_naming_the_file() {
        for (name, text) in [
            ("not-json", "plain"),
            (
                "no-commit",
                r#"{"build":"plain","dirty":false,"features":[]}"#,
            ),
            (
                "other-kind",
                r#"{"build":"debug","commit":"abc","dirty":false,"features":[]}"#,
            ),
            (
                "dirty-string",
                r#"{"build":"plain","commit":"abc","dirty":"no","features":[]}"#,
            ),
            (
                "empty-commit",
                r#"{"build":"plain","commit":"","dirty":false,"features":[]}"#,
            ),
        ] {
            let dir = plugin_dir(name, Some(text));
            let e = format!("{:#}", Build::read(&dir).unwrap_err());
            assert!(
                e.contains(&dir.join(BUILD_RECORD).display().to_string())
                    && e.contains("is not a build record"),
                "{name}: {e}"
            );
            std::fs::remove_dir_all(dir).unwrap();
        }
    }
}
