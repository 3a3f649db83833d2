//! Faults: with the test-only variable `rheap_debug_fail_alloc_after` (plugin built with the
//! engine's `failpoints` feature), block allocation fails after N more blocks. For every N up to
//! the one at which the statement no longer fails, the statement must fail with "out of
//! resources" (or "table is full"), the table must stay consistent and usable, internal
//! temporary tables must leave nothing behind, and the server must stay up with no internal
//! error in its log. The shipped (release) plugin must not have the variable at all.

use anyhow::{bail, ensure, Result};
use mysql::prelude::Queryable;
use mysql::Conn;
use rheap_mtr_tests::plugin;
use rheap_mtr_tests::server::{Options, Server};

/// ER_OUT_OF_RESOURCES (HA_ERR_OUT_OF_MEM), ER_OUTOFMEMORY, ER_RECORD_FILE_FULL.
const ACCEPTED: [u16; 3] = [1041, 1037, 1114];
/// Rows of the source table.
const ROWS: u64 = 8_000;
/// No statement here needs this many blocks; reaching it means the switch does nothing.
const MAX_N: i64 = 400;

fn failpoints_server() -> Result<Server> {
    let dir = plugin::failpoints_dir()?;
    Server::start(Options {
        plugin_dir: Some(dir),
        args: vec!["--plugin-load-add=ha_rheap.so".into()],
        ..Options::default()
    })
}

fn count(c: &mut Conn, sql: &str) -> Result<u64> {
    Ok(c.query_first::<u64, _>(sql)?.unwrap_or(0))
}

fn status(c: &mut Conn, name: &str) -> Result<u64> {
    let row: Option<(String, u64)> = c.query_first(format!("SHOW GLOBAL STATUS LIKE '{name}'"))?;
    Ok(row.map_or(0, |r| r.1))
}

/// Runs `sql` with allocation failing after `n` blocks; the switch is off again afterwards.
/// Ok(true) when it succeeded, Ok(false) when it failed with an accepted error.
fn with_failure(c: &mut Conn, n: i64, sql: &str) -> Result<bool> {
    c.query_drop(format!("SET GLOBAL rheap_debug_fail_alloc_after = {n}"))?;
    // Rows are read (an error may come after the result set's header, which query_drop
    // would not report).
    let r = c.query::<mysql::Row, _>(sql);
    c.query_drop("SET GLOBAL rheap_debug_fail_alloc_after = -1")?;
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
    let live = status(&mut c, "Rheap_tables_live")?;

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
        let ok = with_failure(&mut c, n, fill)?;
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
        if !with_failure(&mut c, 0, "INSERT INTO f VALUES (0, 0, 'v0')")? {
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
        status(&mut c, "Rheap_tables_live")? == live,
        "a table is left"
    );

    // Internal temporary tables (rheap_takeover=INTERNAL, the default): GROUP BY, UNION,
    // DISTINCT fail mid-way with an error and leave no table and no block behind.
    // SQL_SMALL_RESULT: a temporary table whatever the statistics say (else a sort may do).
    let used = status(&mut c, "Rheap_memory_used")?;
    for sql in [
        "SELECT SQL_SMALL_RESULT i % 5003 AS g, COUNT(*) FROM seq GROUP BY g ORDER BY g",
        "SELECT COUNT(*) FROM (SELECT i % 3001 AS a FROM seq UNION SELECT i % 4001 FROM seq) d",
        "SELECT DISTINCT SQL_SMALL_RESULT i % 7919 AS d FROM seq ORDER BY d",
    ] {
        let expect = sql_rows(&mut c, sql)?;
        let created = status(&mut c, "Rheap_tmp_tables_created")?;
        let (mut failures, mut n) = (0, 0);
        loop {
            ensure!(n < MAX_N, "{sql}: still failing after {MAX_N} blocks");
            let ok = with_failure(&mut c, n, sql)?;
            ensure!(count(&mut c, "SELECT 1")? == 1, "server answers");
            ensure!(
                status(&mut c, "Rheap_tables_live")? == live,
                "{sql}: a table is left"
            );
            ensure!(
                status(&mut c, "Rheap_memory_used")? == used,
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
            status(&mut c, "Rheap_tmp_tables_created")? > created,
            "{sql} made no rheap temporary table"
        );
        eprintln!("{sql}: {failures} failures, success at {n}");
        ensure!(failures > 0, "{sql}: never failed");
    }
    no_internal_errors(&server)
}

fn sql_rows(c: &mut Conn, sql: &str) -> Result<Vec<Vec<String>>> {
    Ok(rheap_mtr_tests::sql::query_cells(c, sql)?.1)
}
