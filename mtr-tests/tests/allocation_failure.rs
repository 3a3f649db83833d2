//! Faults: with the test-only variable `rheap_debug_fail_alloc_after` (plugin built with the
//! engine's `failpoints` feature), block allocation fails after N more blocks. For every N up to
//! the one at which the statement no longer fails, the statement must fail with "out of
//! resources" (or "table is full"), the table must stay consistent and usable, internal
//! temporary tables must leave nothing behind, and the server must stay up with no internal
//! error in its log. The shipped (release) plugin must not have the variable at all. With
//! `rheap_debug_fail_nth_alloc` (the Nth allocation of any kind fails), every statement fails
//! cleanly or succeeds, and every count of rheap's memory (`Rheap_memory_used` and
//! performance_schema's `memory/rheap/block`, `Rheap_heap_used` and `memory/rheap/heap`, the
//! session's `Memory_used`) comes back to where it was.

use anyhow::{bail, ensure, Result};
use mysql::prelude::Queryable;
use mysql::Conn;
use rheap_harness::plugin;
use rheap_harness::server::{Options, Server};
use rheap_harness::sql::{global_status, memory_and_status, session_status};

/// ER_OUT_OF_RESOURCES (HA_ERR_OUT_OF_MEM), ER_OUTOFMEMORY, ER_RECORD_FILE_FULL.
const ACCEPTED: [u16; 3] = [1041, 1037, 1114];
/// Rows of the source table.
const ROWS: u64 = 8_000;
/// No statement here needs this many blocks; reaching it means the switch does nothing.
const MAX_N: i64 = 400;

fn failpoints_server() -> Result<Server> {
    failpoints_server_with(&[])
}

/// A server with the failpoints plugin loaded and `args` besides.
fn failpoints_server_with(args: &[&str]) -> Result<Server> {
    let dir = plugin::failpoints_dir()?;
    let mut all = vec!["--plugin-load-add=ha_rheap.so".to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    Server::start(Options {
        plugin_dir: Some(dir),
        args: all,
        ..Options::default()
    })
}

fn count(c: &mut Conn, sql: &str) -> Result<u64> {
    Ok(c.query_first::<u64, _>(sql)?.unwrap_or(0))
}

/// Turns failure switch `var` off after `sql` ran with failure `n`. When that fails the
/// server is gone: the error tells its story from the server's log, where a crash leaves it
/// (the client only sees a broken pipe).
fn disarm(server: &Server, c: &mut Conn, var: &str, n: i64, sql: &str) -> Result<()> {
    c.query_drop(format!("SET GLOBAL {var} = -1")).map_err(|e| {
        anyhow::anyhow!(
            "with failure {n}, {sql}: the server is gone ({e}); error log:\n{}",
            server.error_log()
        )
    })
}

/// Runs `sql` with allocation failing after `n` blocks; the switch is off again afterwards.
/// Ok(true) when it succeeded, Ok(false) when it failed with an accepted error.
fn with_failure(server: &Server, c: &mut Conn, n: i64, sql: &str) -> Result<bool> {
    c.query_drop(format!("SET GLOBAL rheap_debug_fail_alloc_after = {n}"))?;
    // Rows are read (an error may come after the result set's header, which query_drop
    // would not report).
    let r = c.query::<mysql::Row, _>(sql);
    disarm(server, c, "rheap_debug_fail_alloc_after", n, sql)?;
    match r {
        Ok(_) => Ok(true),
        Err(mysql::Error::MySqlError(e)) if ACCEPTED.contains(&e.code) => Ok(false),
        Err(e) => bail!("after {n} blocks, {sql}: unexpected error {e}"),
    }
}

fn no_internal_errors(server: &Server) -> Result<()> {
    let log = server.error_log();
    let bad: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("internal error") || l.contains("panicked"))
        .collect();
    ensure!(
        bad.is_empty(),
        "internal errors in the error log:\n{}",
        bad.join("\n")
    );
    Ok(())
}

/// Every way to reach the rows finds the same `expect` rows: a scan, the BTREE index, the hash
/// primary key and the hash secondary key (for each source row, by lookup).
fn check_table(c: &mut Conn, expect: u64) -> Result<()> {
    let ways = [
        "SELECT COUNT(*) FROM f",
        "SELECT COUNT(*) FROM f FORCE INDEX (kb) WHERE b BETWEEN 0 AND 96",
        "SELECT COUNT(*) FROM seq STRAIGHT_JOIN f FORCE INDEX (PRIMARY) ON f.id = seq.i",
        "SELECT COUNT(*) FROM seq STRAIGHT_JOIN f FORCE INDEX (kv) \
         ON f.v = CONCAT('v', seq.i % 1000) AND f.id = seq.i",
    ];
    for sql in ways {
        ensure!(count(c, sql)? == expect, "{sql}: not {expect} rows");
    }
    // Non-transactional, as MEMORY: the rows written before the failure stay, in source order.
    if expect > 0 {
        let (lo, hi): (u64, u64) = c.query_first("SELECT MIN(id), MAX(id) FROM f")?.unwrap();
        ensure!(
            (lo, hi) == (1, expect),
            "rows {lo}..{hi}, expected 1..{expect}"
        );
    }
    Ok(())
}

#[test]
fn the_shipped_plugin_has_no_failure_switch() -> Result<()> {
    let server = Server::start(Options::with_plugin_loaded()?)?;
    let mut c = server.conn()?;
    let vars: Vec<(String, String)> = c.query("SHOW GLOBAL VARIABLES LIKE 'rheap_debug%'")?;
    ensure!(vars.is_empty(), "release plugin has {vars:?}");
    Ok(())
}

#[test]
fn failed_blocks_fail_the_statement_and_leave_tables_whole() -> Result<()> {
    let server = failpoints_server()?;
    let mut c = server.conn()?;
    c.query_drop("CREATE TABLE seq (i INT PRIMARY KEY) ENGINE=InnoDB")?;
    c.query_drop("SET SESSION max_recursive_iterations = 1000000")?;
    c.query_drop(format!(
        "INSERT INTO seq WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s \
         WHERE n < {ROWS}) SELECT n FROM s"
    ))?;
    let live = global_status(&mut c, "Rheap_tables_live")?;

    // A user table with a hash primary key, a BTREE key and a hash key on a string.
    c.query_drop(
        "CREATE TABLE f (id INT NOT NULL PRIMARY KEY, b INT NOT NULL, v VARCHAR(64), \
         KEY kb (b) USING BTREE, KEY kv (v)) ENGINE=RHEAP",
    )?;
    let fill = "INSERT INTO f SELECT i, i % 97, CONCAT('v', i % 1000) FROM seq";
    let (mut failures, mut partial) = (0, 0);
    let mut n = 0;
    loop {
        ensure!(n < MAX_N, "still failing after {MAX_N} blocks");
        c.query_drop("TRUNCATE TABLE f")?;
        let ok = with_failure(&server, &mut c, n, fill)?;
        let rows = count(&mut c, "SELECT COUNT(*) FROM f")?;
        check_table(&mut c, rows)?;
        if ok {
            ensure!(rows == ROWS, "succeeded with {rows} rows");
            break;
        }
        failures += 1;
        partial += usize::from(rows > 0);
        // Usable again: the rest goes in, and every row is found every way.
        c.query_drop(format!("{fill} WHERE i > {rows}"))?;
        check_table(&mut c, ROWS)?;
        // A single-row write that fails at once: nothing changes.
        if !with_failure(&server, &mut c, 0, "INSERT INTO f VALUES (0, 0, 'v0')")? {
            check_table(&mut c, ROWS)?;
        }
        n += 1;
    }
    eprintln!("user table: {failures} failed fills ({partial} after some rows), success at {n}");
    ensure!(
        failures > 0 && partial > 0,
        "the switch never failed a fill mid-way"
    );
    c.query_drop("DROP TABLE f")?;
    ensure!(
        global_status(&mut c, "Rheap_tables_live")? == live,
        "a table is left"
    );

    // Internal temporary tables (rheap_takeover=INTERNAL, the default): GROUP BY, UNION,
    // DISTINCT fail mid-way with an error and leave no table and no block behind.
    // SQL_SMALL_RESULT: a temporary table whatever the statistics say (else a sort may do).
    let used = global_status(&mut c, "Rheap_memory_used")?;
    for sql in [
        "SELECT SQL_SMALL_RESULT i % 5003 AS g, COUNT(*) FROM seq GROUP BY g ORDER BY g",
        "SELECT COUNT(*) FROM (SELECT i % 3001 AS a FROM seq UNION SELECT i % 4001 FROM seq) d",
        "SELECT DISTINCT SQL_SMALL_RESULT i % 7919 AS d FROM seq ORDER BY d",
    ] {
        let expect = sql_rows(&mut c, sql)?;
        let created = global_status(&mut c, "Rheap_internal_tables_created")?;
        let (mut failures, mut n) = (0, 0);
        loop {
            ensure!(n < MAX_N, "{sql}: still failing after {MAX_N} blocks");
            let ok = with_failure(&server, &mut c, n, sql)?;
            ensure!(count(&mut c, "SELECT 1")? == 1, "server answers");
            ensure!(
                global_status(&mut c, "Rheap_tables_live")? == live,
                "{sql}: a table is left"
            );
            ensure!(
                global_status(&mut c, "Rheap_memory_used")? == used,
                "{sql}: blocks are left after {n}"
            );
            if ok {
                break;
            }
            failures += 1;
            n += 1;
        }
        ensure!(
            sql_rows(&mut c, sql)? == expect,
            "{sql}: other rows after failures"
        );
        ensure!(
            global_status(&mut c, "Rheap_internal_tables_created")? > created,
            "{sql} made no rheap temporary table"
        );
        eprintln!("{sql}: {failures} failures, success at {n}");
        ensure!(failures > 0, "{sql}: never failed");
    }
    no_internal_errors(&server)
}

fn sql_rows(c: &mut Conn, sql: &str) -> Result<Vec<Vec<String>>> {
    Ok(rheap_harness::sql::query_cells(c, sql)?.1)
}

/// The rows of `table` (made as `f` is) found every way agree: a scan, each BTREE key over
/// its whole range, and each HASH key by lookup of every row.
fn consistent(c: &mut Conn, table: &str) -> Result<u64> {
    let rows = count(c, &format!("SELECT COUNT(*) FROM {table}"))?;
    for sql in [
        format!(
            "SELECT COUNT(*) FROM {table} FORCE INDEX (kb) \
             WHERE b BETWEEN -2147483648 AND 2147483647"
        ),
        format!("SELECT COUNT(*) FROM {table} FORCE INDEX (kd) WHERE v >= ''"),
        format!(
            "SELECT COUNT(*) FROM {table} AS a STRAIGHT_JOIN {table} AS b \
             FORCE INDEX (PRIMARY) ON b.id = a.id"
        ),
        format!(
            "SELECT COUNT(*) FROM {table} AS a STRAIGHT_JOIN {table} AS b FORCE INDEX (kv) \
             ON b.v = a.v AND b.id = a.id"
        ),
    ] {
        let n = count(c, &sql)?;
        ensure!(n == rows, "{sql}: {n} rows, a scan finds {rows}");
    }
    Ok(rows)
}

/// Runs `sql` with the `n`th allocation of any kind failing; Ok(true) when it succeeded,
/// Ok(false) when it failed with an accepted error. The switch is off afterwards.
fn with_nth_failing(server: &Server, c: &mut Conn, n: i64, sql: &str) -> Result<bool> {
    c.query_drop(format!("SET GLOBAL rheap_debug_fail_nth_alloc = {n}"))?;
    let r = c.query::<mysql::Row, _>(sql);
    disarm(server, c, "rheap_debug_fail_nth_alloc", n, sql)?;
    match r {
        // The statements run again and again: a row written by an earlier run is a duplicate.
        Ok(_) | Err(mysql::Error::MySqlError(mysql::MySqlError { code: 1062, .. })) => Ok(true),
        Err(mysql::Error::MySqlError(e)) if ACCEPTED.contains(&e.code) => Ok(false),
        // CREATE and ALTER say "Can't create table", RENAME "Error on rename", with the
        // engine's out-of-memory errno.
        Err(mysql::Error::MySqlError(e))
            if [1005, 1025].contains(&e.code) && e.message.contains("Out of memory") =>
        {
            Ok(false)
        }
        Err(e) => bail!("with allocation {n} failing, {sql}: unexpected error {e}"),
    }
}

#[test]
fn any_failed_allocation_fails_the_statement_not_the_server() -> Result<()> {
    // How many allocations to fail, one at a time, per statement.
    const UP_TO: i64 = 48;
    let server = failpoints_server()?;
    let mut c = server.conn()?;
    c.query_drop("CREATE TABLE seq (i INT PRIMARY KEY) ENGINE=InnoDB")?;
    c.query_drop("SET SESSION max_recursive_iterations = 1000000")?;
    c.query_drop(
        "INSERT INTO seq WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s \
         WHERE n < 3000) SELECT n FROM s",
    )?;
    let live = global_status(&mut c, "Rheap_tables_live")?;
    c.query_drop(
        "CREATE TABLE f (id INT NOT NULL PRIMARY KEY, b INT NOT NULL, \
         v VARCHAR(200) CHARACTER SET utf8mb4 NOT NULL, \
         KEY kb (b) USING BTREE, KEY kv (v), KEY kd (v DESC, b) USING BTREE) ENGINE=RHEAP",
    )?;
    c.query_drop(
        "INSERT INTO f SELECT i, i % 97, CONCAT(REPEAT('é', i % 40), i % 300) FROM seq \
         WHERE i <= 1000",
    )?;
    // Each statement's kinds of allocation: writes (rows, keys, long key images), updates
    // that move keys, deletes, reads through each kind of key, and internal temporary tables
    // (information_schema's with BLOBs too).
    let statements = [
        "INSERT INTO f VALUES (1001, 5, REPEAT('x', 150))",
        "INSERT INTO f SELECT i, i % 13, CONCAT('w', i) FROM seq WHERE i BETWEEN 1100 AND 1160",
        "REPLACE INTO f VALUES (7, 8, 'replaced'), (2500, 9, 'new')",
        "UPDATE f SET b = b + 1000, v = CONCAT(v, 'u') WHERE id <= 40",
        "DELETE FROM f WHERE id BETWEEN 200 AND 230",
        "SELECT * FROM f FORCE INDEX (kb) WHERE b BETWEEN 3 AND 9 ORDER BY b",
        "SELECT * FROM f FORCE INDEX (kd) WHERE v > 'é' ORDER BY v DESC LIMIT 20",
        "SELECT * FROM f FORCE INDEX (kv) WHERE v = 'w1130'",
        "SELECT SQL_SMALL_RESULT i % 1009 AS g, COUNT(*) FROM seq GROUP BY g",
        "SELECT DISTINCT SQL_SMALL_RESULT v FROM f",
        "SELECT COUNT(*) FROM (SELECT i % 301 AS a FROM seq UNION SELECT b FROM f) AS d",
        "SELECT * FROM f WHERE id IN (SELECT b FROM f WHERE v LIKE 'w%')",
        "SHOW TABLE STATUS LIKE 'f'",
        // information_schema tables with BLOB/TEXT columns, served in memory.
        "SHOW FULL COLUMNS FROM tb",
        "SELECT TABLE_NAME, COLUMN_TYPE, COLUMN_DEFAULT FROM information_schema.COLUMNS \
         WHERE TABLE_SCHEMA = 'test' ORDER BY COLUMN_TYPE",
        "HANDLER f READ kd NEXT",
        "ALTER TABLE f ENGINE=RHEAP",
        "INSERT INTO tb SELECT i, REPEAT('text', i % 500), CONCAT('v', i % 50) FROM seq \
         WHERE i <= 300 ON DUPLICATE KEY UPDATE t = CONCAT(t, 'x')",
        "UPDATE tb SET t = REPEAT('y', 3000), v = CONCAT(v, 'z') WHERE id < 20",
        "SELECT id, LENGTH(t) FROM tb FORCE INDEX (kt) WHERE v > 'v3' ORDER BY v",
        "CREATE TABLE IF NOT EXISTS g2 ENGINE=RHEAP AS SELECT * FROM f",
        "RENAME TABLE g2 TO g3, g3 TO g2",
        "DROP TABLE IF EXISTS g2, g3",
        "TRUNCATE TABLE f",
    ];
    c.query_drop(
        "CREATE TABLE tb (id INT PRIMARY KEY, t TEXT, v VARCHAR(300), KEY kt (v) USING BTREE) \
         ENGINE=RHEAP",
    )?;
    c.query_drop("HANDLER f OPEN")?;
    let mut failed_statements = 0;
    for sql in statements {
        if sql.starts_with("ALTER") {
            // ALTER replaces the table, which a HANDLER has open.
            c.query_drop("HANDLER f CLOSE")?;
        }
        let mut failures = 0;
        for n in 1..=UP_TO {
            if !with_nth_failing(&server, &mut c, n, sql)? {
                failures += 1;
            }
            ensure!(count(&mut c, "SELECT 1")? == 1, "the server answers");
            consistent(&mut c, "f").map_err(|e| e.context(format!("after {sql} with {n}")))?;
            if sql.starts_with("TRUNCATE") {
                c.query_drop(
                    "INSERT IGNORE INTO f SELECT i, i % 97, CONCAT('t', i) FROM seq WHERE i <= 300",
                )?;
            }
        }
        eprintln!("{sql}: {failures} of {UP_TO} failed");
        // A statement whose buffers and blocks are all there already (an UPDATE of a warm
        // table, a HANDLER step) allocates nothing, and so never fails.
        failed_statements += usize::from(failures > 0);
        let named = count(
            &mut c,
            "SELECT COUNT(*) FROM information_schema.TABLES WHERE ENGINE = 'RHEAP'",
        )?;
        ensure!(
            global_status(&mut c, "Rheap_tables_live")? == live + named,
            "{sql}: an internal table is left"
        );
    }
    ensure!(
        failed_statements >= statements.len() / 2,
        "only {failed_statements} of {} statements met a failing allocation",
        statements.len()
    );
    c.query_drop("DROP TABLE f, tb")?;
    ensure!(
        global_status(&mut c, "Rheap_tables_live")? == live,
        "a table is left"
    );
    no_internal_errors(&server)
}

/// rheap's memory as the server and rheap count it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Counts {
    /// `Rheap_memory_used` and performance_schema's current bytes of `memory/rheap/block`.
    blocks: u64,
    ps_blocks: u64,
    /// This session's `Memory_used` (the server's count, which holds an internal table's
    /// blocks while its statement runs).
    session: u64,
    /// `Rheap_heap_used` and performance_schema's current bytes of `memory/rheap/heap`.
    heap: u64,
    ps_heap: u64,
}

/// How far the heap may be above where it was after statements failed: kept tables keep
/// their handlers' buffers, whose sizes depend on the path the last statement took (a few
/// KiB), while a leak of the failing path would grow with every one of the 40 failures.
const HEAP_SLACK: u64 = 64 << 10;

impl Counts {
    /// rheap's counts equal performance_schema's.
    fn agree(&self) -> bool {
        self.blocks == self.ps_blocks && self.heap == self.ps_heap
    }

    /// Every count back where `start` was: the blocks exactly, the heap within
    /// [`HEAP_SLACK`].
    fn back_to(&self, start: &Counts) -> bool {
        self.agree()
            && (self.blocks, self.ps_blocks, self.session)
                == (start.blocks, start.ps_blocks, start.session)
            && self.heap <= start.heap + HEAP_SLACK
    }
}

fn memory_counts(c: &mut Conn) -> Result<Counts> {
    let (ps_blocks, blocks) = memory_and_status(c, "memory/rheap/block", &["RHEAP_MEMORY_USED"])?;
    let (ps_heap, heap) = memory_and_status(c, "memory/rheap/heap", &["RHEAP_HEAP_USED"])?;
    Ok(Counts {
        blocks,
        ps_blocks,
        session: session_status(c, "Memory_used")?,
        heap,
        ps_heap,
    })
}

#[test]
fn failed_allocations_leave_every_count_of_memory_where_it_was() -> Result<()> {
    // How many allocations to fail, one at a time, per statement.
    const UP_TO: i64 = 40;
    // No cache of free blocks: a block given back goes back to the server's allocator, and
    // leaves every count.
    let server = failpoints_server_with(&[
        "--rheap-block-cache-size=0",
        "--performance-schema=ON",
        "--performance-schema-instrument=memory/rheap/%=ON",
    ])?;
    let mut c = server.conn()?;
    c.query_drop("CREATE TABLE seq (i INT PRIMARY KEY) ENGINE=InnoDB")?;
    c.query_drop("SET SESSION max_recursive_iterations = 1000000")?;
    c.query_drop(
        "INSERT INTO seq WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s \
         WHERE n < 3000) SELECT n FROM s",
    )?;
    c.query_drop(
        "CREATE TABLE f (id INT NOT NULL PRIMARY KEY, b INT NOT NULL, \
         v VARCHAR(200) CHARACTER SET utf8mb4 NOT NULL, t TEXT, \
         KEY kb (b) USING BTREE, KEY kv (v), KEY kd (v DESC, b) USING BTREE) ENGINE=RHEAP",
    )?;
    c.query_drop(
        "INSERT INTO f SELECT i, i % 97, CONCAT(REPEAT('é', i % 40), i % 300), \
         REPEAT('t', i % 700) FROM seq WHERE i <= 1000",
    )?;
    // Statements whose memory is all their internal tables': each path of an internal table
    // (GROUP BY, DISTINCT, UNION, materialised subqueries, derived tables, information_schema
    // tables with BLOBs) and reads through each kind of key.
    let statements = [
        "SELECT SQL_SMALL_RESULT i % 1009 AS g, COUNT(*) FROM seq GROUP BY g",
        "SELECT DISTINCT SQL_SMALL_RESULT v FROM f",
        "SELECT COUNT(*) FROM (SELECT i % 301 AS a FROM seq UNION SELECT b FROM f) AS d",
        "SELECT * FROM f WHERE id IN (SELECT b FROM f WHERE v LIKE 'é%')",
        "SELECT d.g, COUNT(*) FROM (SELECT b AS g, t FROM f GROUP BY b, t) d GROUP BY d.g",
        "SHOW FULL COLUMNS FROM f",
        "SELECT TABLE_NAME, COLUMN_TYPE, COLUMN_DEFAULT FROM information_schema.COLUMNS \
         WHERE TABLE_SCHEMA = 'test' ORDER BY COLUMN_TYPE",
        "SELECT * FROM f FORCE INDEX (kb) WHERE b BETWEEN 3 AND 9 ORDER BY b",
        "SELECT * FROM f FORCE INDEX (kv) WHERE v = 'éé2'",
    ];
    let mut failed_statements = 0;
    for sql in statements {
        // Once first: what the session and the server keep after a statement's first run
        // (caches, buffers) is there before the counts are taken.
        with_nth_failing(&server, &mut c, -1, sql)?;
        let start = memory_counts(&mut c)?;
        ensure!(
            start.agree(),
            "{sql}: rheap's counts and performance_schema's differ: {start:?}"
        );
        let mut failures = 0;
        for n in 1..=UP_TO {
            if !with_nth_failing(&server, &mut c, n, sql)? {
                failures += 1;
            }
            let now = memory_counts(&mut c)?;
            ensure!(
                now.back_to(&start),
                "{sql} with allocation {n} failing: {now:?}, {start:?} before"
            );
        }
        eprintln!("{sql}: {failures} of {UP_TO} failed, every count back");
        failed_statements += usize::from(failures > 0);
    }
    ensure!(
        failed_statements >= statements.len() / 2,
        "only {failed_statements} of {} statements met a failing allocation",
        statements.len()
    );
    // Writes into a named table: each run on a new copy `w` of `f`, the Nth allocation of the
    // write failing; the table is then whole, the counts agree, and once it is dropped all
    // counts are back where they were before it was made.
    let writes = [
        ("", "INSERT INTO w SELECT * FROM f"),
        (
            "INSERT INTO w SELECT * FROM f",
            "UPDATE w SET b = b + 1, v = CONCAT(v, 'u'), t = CONCAT(t, REPEAT('y', 500)) \
             WHERE id <= 600",
        ),
        (
            "INSERT INTO w SELECT * FROM f",
            "DELETE FROM w WHERE id <= 300",
        ),
    ];
    for (fill, sql) in writes {
        let mut failures = 0;
        for n in 1..=UP_TO {
            let start = memory_counts(&mut c)?;
            c.query_drop("CREATE TABLE w LIKE f")?;
            if !fill.is_empty() {
                c.query_drop(fill)?;
            }
            failures += usize::from(!with_nth_failing(&server, &mut c, n, sql)?);
            let now = memory_counts(&mut c)?;
            ensure!(
                now.agree(),
                "{sql} with allocation {n} failing: rheap's counts and P_S's differ: {now:?}"
            );
            // The table is whole: a scan and each key find the same rows.
            consistent(&mut c, "w")?;
            c.query_drop("DROP TABLE w")?;
            let now = memory_counts(&mut c)?;
            ensure!(
                now.back_to(&start),
                "{sql} with allocation {n} failing, then DROP: {now:?}, {start:?} before the \
                 table was made"
            );
        }
        eprintln!("{sql}: {failures} of {UP_TO} failed, every count back after DROP");
        ensure!(
            failures > 0 || sql.starts_with("DELETE"),
            "{sql}: never failed"
        );
    }
    let before_f = memory_counts(&mut c)?;
    c.query_drop("DROP TABLE f")?;
    let now = memory_counts(&mut c)?;
    ensure!(
        now.agree() && now.blocks < before_f.blocks && now.heap < before_f.heap,
        "after DROP: {now:?} (before {before_f:?})"
    );
    no_internal_errors(&server)
}
