//! Limits in numbers: MIN_ROWS at its largest takes no more than a table's first blocks;
//! thousands of RHEAP tables, and thousands of temporary tables open at once in concurrent
//! sessions, all hold their rows, and the live-table counter comes back when they are gone.

use anyhow::{ensure, Result};
use mysql::prelude::Queryable;
use mysql::Conn;
use rheap_harness::server::Server;
use rheap_harness::sql::global_status;

/// The largest block: no structure's first block is larger.
const MAX_BLOCK: u64 = rheap_core::alloc::policy::MAX_BLOCK as u64;

#[test]
fn min_rows_at_its_largest_does_not_preallocate() -> Result<()> {
    let server = Server::with_rheap()?;
    let mut c = server.conn()?;
    // A limit that lets the table hold all those rows: only the block cap stands in the way.
    c.query_drop("SET SESSION max_heap_table_size = 64 * 1024 * 1024 * 1024")?;
    let before = global_status(&mut c, "Rheap_memory_used")?;
    c.query_drop(
        "CREATE TABLE n (a INT, b CHAR(200), KEY (a), KEY (b) USING BTREE) ENGINE=RHEAP \
         MIN_ROWS=4294967295",
    )?;
    c.query_drop("INSERT INTO n VALUES (1, 'x')")?;
    let used = global_status(&mut c, "Rheap_memory_used")? - before;
    // HEAP would size its first block from MIN_ROWS: 4294967295 rows of 200+ bytes.
    ensure!(
        used > 0 && used <= 3 * MAX_BLOCK,
        "{used} bytes for one row with MIN_ROWS=4294967295"
    );
    let n: Option<u64> = c.query_first("SELECT COUNT(*) FROM n WHERE a = 1")?;
    ensure!(n == Some(1));
    c.query_drop("DROP TABLE n")?;
    ensure!(
        global_status(&mut c, "Rheap_memory_used")? == before,
        "blocks left"
    );
    Ok(())
}

#[test]
fn thousands_of_tables() -> Result<()> {
    const TABLES: u64 = 2000;
    let server = Server::with_rheap()?;
    let mut c = server.conn()?;
    let live = global_status(&mut c, "Rheap_tables_live")?;
    for i in 0..TABLES {
        c.query_drop(format!(
            "CREATE TABLE t{i} (a INT PRIMARY KEY, b VARCHAR(20), KEY (b) USING BTREE) \
             ENGINE=RHEAP"
        ))?;
        c.query_drop(format!(
            "INSERT INTO t{i} VALUES ({i}, 'b{i}'), ({i} + 1, 'c')"
        ))?;
    }
    ensure!(global_status(&mut c, "Rheap_tables_live")? == live + TABLES);
    // Every table still holds its own rows (after the table cache evicted most of them).
    for i in (0..TABLES).step_by(97) {
        let b: Option<String> = c.query_first(format!("SELECT b FROM t{i} WHERE a = {i}"))?;
        ensure!(b == Some(format!("b{i}")), "t{i}: {b:?}");
    }
    let n: Option<u64> = c.query_first(
        "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'test' \
         AND ENGINE = 'RHEAP'",
    )?;
    ensure!(n == Some(TABLES));
    for i in 0..TABLES {
        c.query_drop(format!("DROP TABLE t{i}"))?;
    }
    ensure!(
        global_status(&mut c, "Rheap_tables_live")? == live,
        "tables left"
    );
    Ok(())
}

#[test]
fn thousands_of_concurrent_temporary_tables() -> Result<()> {
    const SESSIONS: usize = 8;
    const PER_SESSION: usize = 250;
    let server = Server::with_rheap()?;
    let mut c = server.conn()?;
    let live = global_status(&mut c, "Rheap_tables_live")?;
    let mut conns: Vec<Conn> = (0..SESSIONS)
        .map(|_| server.conn())
        .collect::<Result<_>>()?;
    // Every session makes its temporary tables at the same time as the others.
    std::thread::scope(|s| -> Result<()> {
        let handles: Vec<_> = (conns.iter_mut().enumerate())
            .map(|(k, conn)| {
                s.spawn(move || -> Result<()> {
                    for i in 0..PER_SESSION {
                        conn.query_drop(format!(
                            "CREATE TEMPORARY TABLE tmp{i} (a INT, KEY (a)) ENGINE=RHEAP"
                        ))?;
                        conn.query_drop(format!("INSERT INTO tmp{i} VALUES ({k}), ({i})"))?;
                    }
                    Ok(())
                })
            })
            .collect();
        for h in handles {
            h.join().expect("a session panicked")?;
        }
        Ok(())
    })?;
    let total = (SESSIONS * PER_SESSION) as u64;
    ensure!(global_status(&mut c, "Rheap_tables_live")? == live + total);
    // Each session sees its own tables only: same names, its own rows.
    for (k, conn) in conns.iter_mut().enumerate() {
        for i in (0..PER_SESSION).step_by(31) {
            let rows: Vec<i64> = conn.query(format!("SELECT a FROM tmp{i} ORDER BY a"))?;
            let mut want = vec![k as i64, i as i64];
            want.sort();
            ensure!(rows == want, "session {k} tmp{i}: {rows:?}");
        }
        let names: Vec<String> = (0..PER_SESSION).map(|i| format!("tmp{i}")).collect();
        conn.query_drop(format!("DROP TEMPORARY TABLE {}", names.join(", ")))?;
    }
    ensure!(
        global_status(&mut c, "Rheap_tables_live")? == live,
        "temporary tables left"
    );
    Ok(())
}
