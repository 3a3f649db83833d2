//! `rheap_max_memory`, the server-wide budget: past it, an internal temporary table moves to
//! disk with the same results, and an RHEAP table reports that it is full; lowering the budget
//! below what tables hold takes nothing from them, it only stops growth.

use anyhow::{ensure, Context, Result};
use mysql::prelude::Queryable;
use mysql::Conn;
use rheap_harness::server::Server;
use rheap_harness::sql::{global_status, session_status};

/// A GROUP BY's groups: the group, its row count and the sum of its ids.
type Groups = Vec<(String, u64, u64)>;

/// `ER_RECORD_FILE_FULL`: "The table '%s' is full".
const TABLE_FULL: u16 = 1114;

/// The server error code of a failed statement, if it is one.
fn code(r: mysql::Result<()>) -> Option<u16> {
    match r {
        Err(mysql::Error::MySqlError(e)) => Some(e.code),
        _ => None,
    }
}

/// A budget `extra` bytes above what rheap holds now (its tables' blocks and its heap).
fn budget_above_now(c: &mut Conn, extra: u64) -> Result<u64> {
    let budget =
        global_status(c, "Rheap_memory_used")? + global_status(c, "Rheap_heap_used")? + extra;
    c.query_drop(format!("SET GLOBAL rheap_max_memory = {budget}"))?;
    Ok(budget)
}

#[test]
fn past_the_budget_internal_tables_go_to_disk_with_the_same_results() -> Result<()> {
    let server = Server::with_rheap()?;
    let mut c = server.conn()?;
    c.query_drop("SET SESSION max_recursive_iterations = 100000")?;
    c.query_drop("CREATE TABLE src (id INT PRIMARY KEY, s VARCHAR(100)) ENGINE=InnoDB")?;
    c.query_drop(
        "INSERT INTO src WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq \
         WHERE n < 20000) SELECT n, CONCAT('value-', n * 7919 % 20011) FROM seq",
    )?;
    let q = "SELECT s, COUNT(*), SUM(id) FROM src GROUP BY s ORDER BY s";
    let run = |c: &mut Conn| -> Result<(Groups, u64)> {
        let disk = session_status(c, "Created_tmp_disk_tables")?;
        let rows: Groups = c.query(q)?;
        Ok((rows, session_status(c, "Created_tmp_disk_tables")? - disk))
    };

    c.query_drop("SET GLOBAL rheap_max_memory = 0")?;
    let (in_memory, disk) = run(&mut c)?;
    ensure!(in_memory.len() == 20000, "{} groups", in_memory.len());
    ensure!(
        disk == 0,
        "without a budget the table stays in memory ({disk} on disk)"
    );

    let refusals = global_status(&mut c, "Rheap_memory_budget_refusals")?;
    let converted = global_status(&mut c, "Rheap_internal_tables_converted")?;
    let budget = budget_above_now(&mut c, 1 << 20)?;
    let (spilled, disk) = run(&mut c)?;
    ensure!(
        spilled == in_memory,
        "results differ once the table moved to disk"
    );
    ensure!(
        disk >= 1,
        "the table did not move to disk under a budget of {budget}"
    );
    ensure!(global_status(&mut c, "Rheap_memory_budget_refusals")? > refusals);
    ensure!(global_status(&mut c, "Rheap_internal_tables_converted")? > converted);
    c.query_drop("SET GLOBAL rheap_max_memory = DEFAULT")?;
    let default: Option<u64> = c.query_first("SELECT @@global.rheap_max_memory")?;
    ensure!(default == Some(1 << 30), "default {default:?}");
    Ok(())
}

#[test]
fn past_the_budget_an_rheap_table_is_full_and_lowering_it_takes_nothing() -> Result<()> {
    let server = Server::with_rheap()?;
    let mut c = server.conn()?;
    c.query_drop("SET SESSION max_heap_table_size = 1024 * 1024 * 1024")?;
    c.query_drop("CREATE TABLE r (a INT, b CHAR(200), KEY (a)) ENGINE=RHEAP")?;
    let refusals = global_status(&mut c, "Rheap_memory_budget_refusals")?;
    budget_above_now(&mut c, 4 << 20)?;
    let insert = "INSERT INTO r WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 \
                  FROM seq WHERE n < 1000) SELECT n, 'x' FROM seq";
    let mut full = None;
    for _ in 0..100 {
        if let Some(e) = code(c.query_drop(insert)) {
            full = Some(e);
            break;
        }
    }
    ensure!(
        full == Some(TABLE_FULL),
        "no 'table is full' at the budget: {full:?}"
    );
    ensure!(global_status(&mut c, "Rheap_memory_budget_refusals")? > refusals);
    let rows: u64 = c
        .query_first("SELECT COUNT(*) FROM r")?
        .context("no count")?;
    ensure!(rows >= 1000, "{rows} rows before the budget stopped it");

    // Below what the table holds: it keeps every row, reads work, growth stops.
    c.query_drop("SET GLOBAL rheap_max_memory = 1024")?;
    let again: u64 = c
        .query_first("SELECT COUNT(*) FROM r WHERE a > 0")?
        .context("no count")?;
    ensure!(
        again == rows,
        "{again} rows of {rows} left after lowering the budget"
    );
    ensure!(code(c.query_drop("INSERT INTO r SELECT a, b FROM r LIMIT 1000")) == Some(TABLE_FULL));
    c.query_drop("DELETE FROM r WHERE a <= 10")?;

    // No budget: it grows again.
    c.query_drop("SET GLOBAL rheap_max_memory = 0")?;
    c.query_drop(insert)?;
    let after: u64 = c
        .query_first("SELECT COUNT(*) FROM r")?
        .context("no count")?;
    ensure!(
        after > rows,
        "{after} rows once the budget is gone, {rows} before"
    );
    let before_drop = global_status(&mut c, "Rheap_memory_used")?;
    c.query_drop("DROP TABLE r")?;
    ensure!(global_status(&mut c, "Rheap_memory_used")? < before_drop);
    Ok(())
}

/// A table that holds nothing always gets its first block, whatever the budget: a recursive
/// CTE's increment table holds one row an iteration, and when the server finds it full and
/// moves it to disk, that row is lost (MDEV-40803) and the recursion stops early.
#[test]
fn a_spent_budget_still_gives_a_new_table_its_first_block() -> Result<()> {
    let server = Server::with_rheap()?;
    let mut c = server.conn()?;
    c.query_drop("SET SESSION max_recursive_iterations = 1000000")?;
    c.query_drop("SET GLOBAL rheap_max_memory = 1048576")?;
    let disk = session_status(&mut c, "Created_tmp_disk_tables")?;
    let (rows, last): (u64, u64) = c
        .query_first(
            "WITH RECURSIVE q(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM q WHERE n < 60000) \
             SELECT COUNT(*), MAX(n) FROM q",
        )?
        .context("no row")?;
    ensure!(
        session_status(&mut c, "Created_tmp_disk_tables")? > disk,
        "the CTE's result table stayed in memory: the budget was not reached"
    );
    ensure!(
        (rows, last) == (60000, 60000),
        "the recursion returned {rows} rows up to {last}, not 60000"
    );
    c.query_drop("SET GLOBAL rheap_max_memory = DEFAULT")?;
    Ok(())
}
