//! The stress run (`cargo xtask stress`): many clients for a bounded time against one private
//! server with RHEAP loaded, mixing statements that build internal temporary tables, DDL on
//! RHEAP (and MEMORY) tables, writers and readers on shared RHEAP tables, and a client that
//! keeps switching `rheap_takeover`. Then the checks: the server is up, the shared tables hold
//! exactly the rows the clients know they committed, every result checked along the way was
//! right, `Rheap_tables_live` is back to its start value once what the run made is dropped, and
//! the error log has no internal error.
//!
//! RHEAP, like MEMORY, is not transactional: an INSERT or DELETE that returned OK is committed.
//! A statement whose outcome the client could not learn (its connection broke) makes its row
//! uncertain: the check then accepts the row either way, and counts it.

use anyhow::{Context, Result};
use mysql::prelude::Queryable;
use mysql::Conn;
use rheap_harness::server::{Options, Server};
use rheap_harness::sql::{global_status, query_cells};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How big and how long.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    pub threads: usize,
    pub secs: u64,
}

impl Config {
    /// The documented full run: 32 clients for 60 s.
    pub const FULL: Config = Config {
        threads: 32,
        secs: 60,
    };
    /// The short run in `cargo xtask test`.
    pub const SHORT: Config = Config {
        threads: 8,
        secs: 8,
    };
}

/// What a run did and found.
#[derive(Debug, Default)]
pub struct Report {
    pub statements: u64,
    /// Errors by server error code (or `client: ...` for a broken connection).
    pub errors: BTreeMap<String, u64>,
    /// Each final check: its name, whether it held, and what was seen.
    pub checks: Vec<(String, bool, String)>,
    pub elapsed: Duration,
}

impl Report {
    pub fn ok(&self) -> bool {
        self.checks.iter().all(|c| c.1)
    }

    pub fn print(&self) {
        println!(
            "stress: {} statements in {:.1?} ({:.0}/s)",
            self.statements,
            self.elapsed,
            self.statements as f64 / self.elapsed.as_secs_f64().max(0.001)
        );
        if self.errors.is_empty() {
            println!("errors: none");
        }
        for (code, n) in &self.errors {
            println!("errors: {code:<44} {n:>8}");
        }
        for (name, ok, seen) in &self.checks {
            println!(
                "check: {:<4} {name}: {seen}",
                if *ok { "ok" } else { "FAIL" }
            );
        }
    }
}

/// Error codes a statement of this run may legitimately get, and why: every other error
/// fails the run.
const EXPECTED: &[(u16, &str)] = &[
    // ER_RECORD_FILE_FULL: a DDL client's table reaches max_heap_table_size (it is small here
    // so that tables fill); the statement fails as on MEMORY.
    (1114, "table full"),
];

/// What every client shares.
struct Shared {
    stop: AtomicBool,
    statements: AtomicU64,
    errors: Mutex<BTreeMap<String, u64>>,
    /// Wrong results seen by a client (a check inside the run failed), with the first few.
    wrong: Mutex<Vec<String>>,
    wrong_count: AtomicU64,
    /// Rows of the shared tables: known committed, and uncertain (outcome never learnt).
    known: Mutex<[BTreeSet<i64>; 2]>,
    uncertain: Mutex<[BTreeSet<i64>; 2]>,
    /// Expected results of the temp-table statements over the static InnoDB tables.
    expected: Vec<(String, Vec<Vec<String>>)>,
}

impl Shared {
    fn wrong(&self, what: String) {
        self.wrong_count.fetch_add(1, Ordering::Relaxed);
        let mut w = self.wrong.lock().unwrap();
        if w.len() < 10 {
            w.push(what);
        }
    }
}

/// The shared RHEAP tables: a hash primary key, a BTREE one.
const SHARED: [&str; 2] = ["shared_h", "shared_b"];
/// Rows of each static InnoDB source table.
const SRC_ROWS: u64 = 500;
const SRC_TABLES: usize = 4;

/// One client's connection, counting its statements and errors.
struct Client<'a> {
    conn: Conn,
    server: &'a Server,
    shared: &'a Shared,
    rng: fastrand::Rng,
    id: usize,
}

/// A statement's failure as the run counts it.
fn error_key(e: &mysql::Error) -> String {
    match e {
        mysql::Error::MySqlError(m) => format!("{} {}", m.code, short(&m.message)),
        mysql::Error::IoError(_) => "client: connection broken".into(),
        other => format!("client: {}", short(&other.to_string())),
    }
}

fn short(s: &str) -> String {
    let s: String = s.chars().take(40).collect();
    s.replace(|c: char| c.is_ascii_digit(), "#")
}

impl<'a> Client<'a> {
    fn new(server: &'a Server, shared: &'a Shared, id: usize) -> Result<Client<'a>> {
        Ok(Client {
            conn: server.conn()?,
            server,
            shared,
            rng: fastrand::Rng::with_seed(id as u64 * 7919 + 1),
            id,
        })
    }

    /// Runs one statement and reads its rows; errors are counted and returned.
    fn run(&mut self, sql: &str) -> std::result::Result<Vec<Vec<String>>, mysql::Error> {
        self.shared.statements.fetch_add(1, Ordering::Relaxed);
        let r = query_cells(&mut self.conn, sql).map(|(_, rows)| rows);
        match r {
            Ok(rows) => Ok(rows),
            Err(e) => {
                let e = match e.downcast::<mysql::Error>() {
                    Ok(e) => e,
                    Err(other) => mysql::Error::from(std::io::Error::other(other.to_string())),
                };
                *self
                    .shared
                    .errors
                    .lock()
                    .unwrap()
                    .entry(error_key(&e))
                    .or_default() += 1;
                if !matches!(e, mysql::Error::MySqlError(_)) {
                    // A broken connection: a new one if the server is still there.
                    if self.server.is_running() {
                        if let Ok(c) = self.server.conn() {
                            self.conn = c;
                        }
                    } else {
                        self.shared.stop.store(true, Ordering::Relaxed);
                    }
                }
                Err(e)
            }
        }
    }

    fn affected(&self) -> u64 {
        self.conn.affected_rows()
    }

    fn stopped(&self) -> bool {
        self.shared.stop.load(Ordering::Relaxed)
    }

    /// Statements that build internal temporary tables, over the static InnoDB tables; those
    /// with a known answer are checked.
    fn temp_tables(&mut self) {
        let i = self.rng.usize(..self.shared.expected.len());
        let (sql, want) = &self.shared.expected[i];
        let sql = sql.clone();
        if let Ok(mut rows) = self.run(&sql) {
            rows.sort();
            if &rows != want {
                self.shared.wrong(format!(
                    "{sql}: {} rows, expected {}",
                    rows.len(),
                    want.len()
                ));
            }
        }
        let t = self.rng.usize(..SRC_TABLES);
        let show = match self.rng.u8(..3) {
            0 => format!("SHOW INDEX FROM src{t}"),
            1 => format!("SHOW TABLE STATUS LIKE 'src{t}'"),
            _ => "SELECT TABLE_NAME, INDEX_NAME FROM information_schema.STATISTICS \
                  WHERE TABLE_SCHEMA = 'test' GROUP BY TABLE_NAME, INDEX_NAME"
                .into(),
        };
        let _ = self.run(&show);
    }

    /// A writer on the shared tables: inserts rows of its own (ids unique to the client),
    /// updates and deletes some of them; remembers what is committed.
    fn write_shared(&mut self, next: &mut i64, mine: &mut [Vec<i64>; 2]) {
        let t = self.rng.usize(..2);
        let table = SHARED[t];
        match self.rng.u8(..10) {
            0..=5 => {
                // A few rows per INSERT.
                let n = self.rng.i64(1..=5);
                let ids: Vec<i64> = (0..n)
                    .map(|_| {
                        *next += 1;
                        self.id as i64 * 100_000_000 + *next
                    })
                    .collect();
                let values: Vec<String> = ids
                    .iter()
                    .map(|id| format!("({id}, {}, 'v{id}')", self.id))
                    .collect();
                let sql = format!("INSERT INTO {table} VALUES {}", values.join(", "));
                match self.run(&sql) {
                    Ok(_) => {
                        self.shared.known.lock().unwrap()[t].extend(&ids);
                        mine[t].extend(&ids);
                    }
                    Err(mysql::Error::MySqlError(_)) => {}
                    Err(_) => {
                        self.shared.uncertain.lock().unwrap()[t].extend(&ids);
                    }
                }
            }
            6 | 7 if !mine[t].is_empty() => {
                let k = self.rng.usize(..mine[t].len());
                let id = mine[t][k];
                // Always a change (v alternates), so one row is affected.
                let sql = format!(
                    "UPDATE {table} SET v = IF(v LIKE 'u%', 'v{id}', 'u{id}') WHERE id = {id}"
                );
                if self.run(&sql).is_ok() && self.affected() != 1 {
                    self.shared
                        .wrong(format!("{sql}: {} rows", self.affected()));
                }
            }
            8 | 9 if !mine[t].is_empty() => {
                let k = self.rng.usize(..mine[t].len());
                let id = mine[t].swap_remove(k);
                let sql = format!("DELETE FROM {table} WHERE id = {id}");
                match self.run(&sql) {
                    Ok(_) => {
                        if self.affected() != 1 {
                            self.shared
                                .wrong(format!("{sql}: {} rows", self.affected()));
                        }
                        self.shared.known.lock().unwrap()[t].remove(&id);
                    }
                    Err(mysql::Error::MySqlError(_)) => mine[t].push(id),
                    Err(_) => {
                        self.shared.known.lock().unwrap()[t].remove(&id);
                        self.shared.uncertain.lock().unwrap()[t].insert(id);
                    }
                }
            }
            _ => {}
        }
    }

    /// A reader of the shared tables: within one statement (one table lock) the scan and the
    /// indexes agree, and every row has a value its writer wrote.
    fn read_shared(&mut self) {
        let checks = [
            "SELECT (SELECT COUNT(*) FROM shared_b), \
             (SELECT COUNT(*) FROM shared_b FORCE INDEX (PRIMARY) WHERE id >= 0), \
             (SELECT COUNT(*) FROM shared_b FORCE INDEX (v) WHERE v >= '')",
            "SELECT COUNT(*) FROM shared_h WHERE v NOT IN (CONCAT('v', id), CONCAT('u', id))",
            "SELECT COUNT(*) FROM shared_b WHERE v NOT IN (CONCAT('v', id), CONCAT('u', id))",
            "SELECT COUNT(*) FROM shared_h a JOIN shared_h b FORCE INDEX (PRIMARY) \
             ON a.id = b.id WHERE a.v <> b.v",
        ];
        let i = self.rng.usize(..checks.len());
        if let Ok(rows) = self.run(checks[i]) {
            let row = rows.first().cloned().unwrap_or_default();
            let good = if i == 0 {
                row.windows(2).all(|w| w[0] == w[1])
            } else {
                row == ["0"]
            };
            if !good {
                self.shared.wrong(format!("{}: {row:?}", checks[i]));
            }
        }
        // A temporary table over the shared table too.
        let t = SHARED[self.rng.usize(..2)];
        let _ = self.run(&format!(
            "SELECT owner, COUNT(*), MAX(id) FROM {t} GROUP BY owner ORDER BY owner"
        ));
    }

    /// DDL on tables of its own: CREATE, INSERT, ALTER (ADD INDEX, MODIFY, ENGINE), TRUNCATE,
    /// RENAME, DROP, on RHEAP, on MEMORY (rheap's under rheap_takeover=ALL) and on TEMPORARY
    /// tables; the row counts are checked after each change.
    fn ddl(&mut self, round: u64) {
        let me = self.id;
        let t = format!("d{me}_{round}");
        let engine = if self.rng.bool() { "RHEAP" } else { "MEMORY" };
        let temporary = if self.rng.u8(..4) == 0 {
            "TEMPORARY "
        } else {
            ""
        };
        let src = self.rng.usize(..SRC_TABLES);
        let rows = self.rng.u64(1..=SRC_ROWS);
        let mut steps: Vec<(String, Option<u64>)> = vec![
            (
                format!(
                    "CREATE {temporary}TABLE {t} (id INT NOT NULL PRIMARY KEY, g INT, \
                     h VARCHAR(20)) ENGINE={engine}"
                ),
                None,
            ),
            (
                format!("INSERT INTO {t} SELECT id, g, h FROM src{src} WHERE id <= {rows}"),
                None,
            ),
            (format!("SELECT COUNT(*) FROM {t}"), Some(rows)),
            (
                format!("ALTER TABLE {t} ADD INDEX ig (g) USING BTREE, ADD INDEX ih (h)"),
                None,
            ),
            (
                format!("SELECT COUNT(*) FROM {t} FORCE INDEX (ig) WHERE g >= 0"),
                Some(rows),
            ),
            (format!("ALTER TABLE {t} MODIFY h VARCHAR(40)"), None),
            (
                format!("SELECT COUNT(*) FROM {t} WHERE h = CONCAT('h', id % 37)"),
                Some(rows),
            ),
            (format!("ALTER TABLE {t} ENGINE=InnoDB"), None),
            (format!("ALTER TABLE {t} ENGINE={engine}"), None),
            (format!("SELECT COUNT(*) FROM {t}"), Some(rows)),
            (format!("TRUNCATE TABLE {t}"), None),
            (format!("SELECT COUNT(*) FROM {t}"), Some(0)),
            (
                format!("INSERT INTO {t} VALUES (1, 1, 'h1'), (2, 2, 'h2')"),
                None,
            ),
        ];
        if temporary.is_empty() {
            steps.push((format!("RENAME TABLE {t} TO {t}_r"), None));
            steps.push((format!("SELECT COUNT(*) FROM {t}_r"), Some(2)));
            steps.push((format!("DROP TABLE {t}_r"), None));
        } else {
            steps.push((format!("DROP TEMPORARY TABLE {t}"), None));
        }
        for (sql, want) in steps {
            match self.run(&sql) {
                Ok(rows) => {
                    if let Some(want) = want {
                        let got = rows.first().and_then(|r| r.first()).cloned();
                        if got != Some(want.to_string()) {
                            self.shared
                                .wrong(format!("{sql}: {got:?}, expected {want}"));
                        }
                    }
                }
                // A failed step leaves the rest of the round meaningless: clean up.
                Err(_) => break,
            }
        }
        let _ = self.run(&format!("DROP {temporary}TABLE IF EXISTS {t}, {t}_r"));
    }

    /// Many temporary tables open at once in one session, then gone with DROP.
    fn many_temporary(&mut self) {
        let n = self.rng.usize(10..50);
        for i in 0..n {
            let _ = self.run(&format!(
                "CREATE TEMPORARY TABLE tmp{i} (a INT, KEY (a)) ENGINE=RHEAP"
            ));
            let _ = self.run(&format!("INSERT INTO tmp{i} VALUES ({i}), ({i} + 1)"));
        }
        let r = self.run(&format!(
            "SELECT COUNT(*) FROM (SELECT a FROM tmp0 UNION ALL SELECT a FROM tmp{}) d",
            n - 1
        ));
        if let Ok(rows) = r {
            if rows != [["4"]] {
                self.shared.wrong(format!("temporary tables: {rows:?}"));
            }
        }
        let names: Vec<String> = (0..n).map(|i| format!("tmp{i}")).collect();
        let _ = self.run(&format!("DROP TEMPORARY TABLE {}", names.join(", ")));
    }

    /// The takeover switch, flipped among its three modes.
    fn switch_takeover(&mut self) {
        let mode = ["OFF", "INTERNAL", "ALL"][self.rng.usize(..3)];
        let _ = self.run(&format!("SET GLOBAL rheap_takeover = {mode}"));
        self.temp_tables();
    }
}

/// The role of client `id`: one switches takeover; the rest cycle through the others.
fn work(client: &mut Client, id: usize) {
    let mut next = 0i64;
    let mut mine: [Vec<i64>; 2] = [Vec::new(), Vec::new()];
    let mut round = 0u64;
    while !client.stopped() {
        round += 1;
        match id % 8 {
            _ if id == 5 => client.switch_takeover(),
            0 | 4 => client.temp_tables(),
            1 | 5 => client.ddl(round),
            2 | 3 => client.write_shared(&mut next, &mut mine),
            6 => client.read_shared(),
            _ => {
                if round.is_multiple_of(4) {
                    client.many_temporary()
                } else {
                    client.read_shared()
                }
            }
        }
    }
}

/// Creates the static InnoDB tables and the shared RHEAP tables; returns the temp-table
/// statements with their answers.
fn setup(c: &mut Conn) -> Result<Vec<(String, Vec<Vec<String>>)>> {
    c.query_drop("SET SESSION max_recursive_iterations = 100000")?;
    for t in 0..SRC_TABLES {
        c.query_drop(format!(
            "CREATE TABLE src{t} (id INT PRIMARY KEY, g INT, h VARCHAR(20), k INT, KEY (k)) \
             ENGINE=InnoDB"
        ))?;
        c.query_drop(format!(
            "INSERT INTO src{t} WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s \
             WHERE n < {SRC_ROWS}) SELECT n, n % {m}, CONCAT('h', n % 37), n % 11 FROM s",
            m = 7 + t * 5
        ))?;
    }
    // The shared tables may grow large; everything else stays under the small global limit.
    c.query_drop("SET SESSION max_heap_table_size = 256 * 1024 * 1024")?;
    c.query_drop(
        "CREATE TABLE shared_h (id BIGINT NOT NULL PRIMARY KEY, owner INT NOT NULL, \
         v VARCHAR(40) NOT NULL, KEY (owner)) ENGINE=RHEAP",
    )?;
    c.query_drop(
        "CREATE TABLE shared_b (id BIGINT NOT NULL, owner INT NOT NULL, v CHAR(30) NOT NULL, \
         PRIMARY KEY USING BTREE (id), KEY v USING BTREE (v)) ENGINE=RHEAP",
    )?;
    let mut statements = Vec::new();
    for t in 0..SRC_TABLES {
        statements.extend([
            format!("SELECT g, COUNT(*), SUM(k) FROM src{t} GROUP BY g"),
            format!("SELECT DISTINCT h FROM src{t}"),
            format!("SELECT COUNT(*) FROM (SELECT g FROM src{t} UNION SELECT k FROM src{t}) d"),
            format!(
                "SELECT d.g, COUNT(*) FROM (SELECT g, h FROM src{t} WHERE id % 3 = 0) d \
                 GROUP BY d.g, d.h"
            ),
            format!("SELECT COUNT(DISTINCT h, g) FROM src{t}"),
            format!(
                "SELECT h FROM src{t} WHERE g IN (SELECT k FROM src{o} WHERE id < 100) \
                 GROUP BY h",
                o = (t + 1) % SRC_TABLES
            ),
        ]);
    }
    let mut out = Vec::new();
    for sql in statements {
        let (_, mut rows) = query_cells(c, &sql)?;
        rows.sort();
        out.push((sql, rows));
    }
    Ok(out)
}

/// Runs the stress test on a new private server; prints progress every few seconds.
pub fn run(cfg: Config) -> Result<Report> {
    let mut opts = Options::with_plugin_loaded()?;
    opts.args.extend([
        "--max-connections=200".to_string(),
        // Small, so that DDL clients' tables and some temporary tables fill up and internal
        // ones move to disk while the run goes on.
        "--max-heap-table-size=1M".into(),
        "--tmp-table-size=1M".into(),
    ]);
    let server = Server::start(opts)?;
    let mut c = server.conn()?;
    let expected = setup(&mut c).context("setting up the stress tables")?;
    let live_start = global_status(&mut c, "Rheap_tables_live")?;
    let shared = Shared {
        stop: AtomicBool::new(false),
        statements: AtomicU64::new(0),
        errors: Mutex::new(BTreeMap::new()),
        wrong: Mutex::new(Vec::new()),
        wrong_count: AtomicU64::new(0),
        known: Mutex::new([BTreeSet::new(), BTreeSet::new()]),
        uncertain: Mutex::new([BTreeSet::new(), BTreeSet::new()]),
        expected,
    };
    let started = Instant::now();
    let deadline = started + Duration::from_secs(cfg.secs);
    let shared = Arc::new(shared);
    std::thread::scope(|scope| -> Result<()> {
        let mut handles = Vec::new();
        for id in 0..cfg.threads {
            let (server, shared) = (&server, &*shared);
            handles.push(scope.spawn(move || -> Result<()> {
                let mut client = Client::new(server, shared, id)?;
                work(&mut client, id);
                Ok(())
            }));
        }
        // Progress, until the time is up or a client saw the server go.
        let mut last = Instant::now();
        while Instant::now() < deadline && !shared.stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(200));
            if last.elapsed() >= Duration::from_secs(5) {
                last = Instant::now();
                let errors: u64 = shared.errors.lock().unwrap().values().sum();
                println!(
                    "  {:>4.0?}  {} statements, {} errors, {} wrong results",
                    started.elapsed(),
                    shared.statements.load(Ordering::Relaxed),
                    errors,
                    shared.wrong_count.load(Ordering::Relaxed)
                );
            }
        }
        shared.stop.store(true, Ordering::Relaxed);
        for h in handles {
            h.join().expect("a stress client panicked")?;
        }
        Ok(())
    })?;
    let elapsed = started.elapsed();
    let shared = Arc::try_unwrap(shared).map_err(|_| anyhow::anyhow!("clients still running"))?;

    let mut report = Report {
        statements: shared.statements.load(Ordering::Relaxed),
        errors: shared.errors.lock().unwrap().clone(),
        elapsed,
        ..Report::default()
    };
    let mut check = |name: &str, ok: bool, seen: String| {
        report.checks.push((name.to_string(), ok, seen));
    };

    // The server is up and answers.
    let alive = server.is_running()
        && server
            .conn()
            .and_then(|mut c| Ok(c.query_first::<u64, _>("SELECT 1")?))
            .ok()
            .flatten()
            == Some(1);
    check("server up (SELECT 1)", alive, format!("answers: {alive}"));
    if !alive {
        return Ok(report);
    }
    let mut c = server.conn()?;
    c.query_drop("SET GLOBAL rheap_takeover = INTERNAL")?;

    // Errors: only the expected codes.
    let unexpected: Vec<String> = (report.errors.iter())
        .filter(|(k, _)| {
            !EXPECTED
                .iter()
                .any(|(code, _)| k.starts_with(&format!("{code} ")))
        })
        .map(|(k, n)| format!("{k} ×{n}"))
        .collect();
    check(
        "only expected errors",
        unexpected.is_empty(),
        if unexpected.is_empty() {
            "none other than table full".into()
        } else {
            unexpected.join("; ")
        },
    );
    let wrong = shared.wrong.lock().unwrap().clone();
    let wrong_count = shared.wrong_count.load(Ordering::Relaxed);
    check(
        "results checked during the run were right",
        wrong_count == 0,
        if wrong.is_empty() {
            "all right".into()
        } else {
            format!("{wrong_count} wrong, first: {}", wrong.join(" | "))
        },
    );

    // The shared tables hold exactly the committed rows (uncertain ones either way).
    let known = shared.known.lock().unwrap();
    let uncertain = shared.uncertain.lock().unwrap();
    for (t, table) in SHARED.iter().enumerate() {
        let rows: Vec<(i64, i64, String)> = c.query(format!("SELECT id, owner, v FROM {table}"))?;
        let ids: BTreeSet<i64> = rows.iter().map(|r| r.0).collect();
        let missing = known[t].difference(&ids).count();
        let extra = (ids.difference(&known[t]))
            .filter(|id| !uncertain[t].contains(id))
            .count();
        let bad_values = (rows.iter())
            .filter(|(id, owner, v)| {
                *owner != id / 100_000_000 || (*v != format!("v{id}") && *v != format!("u{id}"))
            })
            .count();
        check(
            &format!("{table} rows = committed rows"),
            missing == 0 && extra == 0 && bad_values == 0 && rows.len() == ids.len(),
            format!(
                "{} rows, {} known committed, {} uncertain, {missing} missing, {extra} extra, \
                 {bad_values} with wrong values",
                rows.len(),
                known[t].len(),
                uncertain[t].len()
            ),
        );
    }

    // Rheap_tables_live back to its start value once the shared tables are dropped (and the
    // start value counted them).
    let live_end = global_status(&mut c, "Rheap_tables_live")?;
    c.query_drop("DROP TABLE shared_h, shared_b")?;
    let live_after_drop = global_status(&mut c, "Rheap_tables_live")?;
    check(
        "Rheap_tables_live back to start",
        live_end == live_start && live_after_drop + 2 == live_start,
        format!(
            "start {live_start}, end {live_end}, after dropping the 2 shared tables \
             {live_after_drop}"
        ),
    );
    let log = server.error_log();
    let bad: Vec<&str> = (log.lines())
        .filter(|l| {
            l.contains("internal error")
                || l.contains("panicked")
                || (l.contains("[ERROR]") && l.to_lowercase().contains("rheap"))
        })
        .collect();
    check(
        "error log: no internal error",
        bad.is_empty(),
        if bad.is_empty() {
            "clean".into()
        } else {
            bad.iter().take(3).cloned().collect::<Vec<_>>().join(" | ")
        },
    );
    Ok(report)
}
