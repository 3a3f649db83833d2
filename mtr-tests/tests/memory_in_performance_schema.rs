//! Every byte rheap holds shows in performance_schema under its own instrument, with the figure
//! rheap's status variables give: `memory/rheap/block` is the blocks tables hold
//! (`Rheap_memory_used`) and those in the cache (`Rheap_block_cache_bytes`);
//! `memory/rheap/heap` is the rest the plugin allocates, handler buffers and definitions
//! among it (`Rheap_heap_used`).

use anyhow::{ensure, Result};
use mysql::prelude::Queryable;
use mysql::Conn;
use rheap_harness::server::{Options, Server};
use rheap_harness::sql::memory_and_status;

/// (rheap's blocks and cache, P_S's blocks, rheap's heap, P_S's heap).
fn counts(c: &mut Conn) -> Result<(u64, u64, u64, u64)> {
    let (ps_blocks, blocks) = memory_and_status(
        c,
        "memory/rheap/block",
        &["RHEAP_MEMORY_USED", "RHEAP_BLOCK_CACHE_BYTES"],
    )?;
    let (ps_heap, heap) = memory_and_status(c, "memory/rheap/heap", &["RHEAP_HEAP_USED"])?;
    Ok((blocks, ps_blocks, heap, ps_heap))
}

#[test]
fn blocks_and_heap_show_in_performance_schema_as_rheap_counts_them() -> Result<()> {
    let mut opts = Options::with_plugin_loaded()?;
    opts.args.extend([
        "--performance-schema=ON".to_string(),
        "--performance-schema-instrument=memory/rheap/%=ON".to_string(),
        "--rheap-takeover=INTERNAL".to_string(),
    ]);
    let server = Server::start(opts)?;
    let mut c = server.conn()?;
    let check = |c: &mut Conn, at: &str| -> Result<(u64, u64, u64, u64)> {
        let n = counts(c)?;
        ensure!(
            n.0 == n.1 && n.2 == n.3,
            "{at}: (rheap blocks, P_S blocks, rheap heap, P_S heap) = {n:?}"
        );
        Ok(n)
    };
    let empty = check(&mut c, "at start")?;
    ensure!(
        memory_and_status(&mut c, "memory/rheap/none", &["RHEAP_HEAP_USED"]).is_err(),
        "an instrument that is not there reads as a count"
    );

    c.query_drop(
        "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(200) CHARACTER SET utf8mb4, b TEXT, \
         KEY (v), KEY USING BTREE (id, v)) ENGINE=RHEAP",
    )?;
    c.query_drop(
        "INSERT INTO t SELECT seq, CONCAT('v', seq % 500), REPEAT('b', seq % 3000) \
         FROM seq_1_to_5000",
    )?;
    // Reads that fill a handler's BLOB buffer and the compare scratch; internal tables.
    let long: Option<u64> = c.query_first("SELECT MAX(LENGTH(b)) FROM t WHERE v = 'v499'")?;
    ensure!(long == Some(2999), "{long:?}");
    let groups: Vec<(String, u64)> = c.query("SELECT v, COUNT(*) FROM t GROUP BY v")?;
    ensure!(groups.len() == 500, "{} groups", groups.len());
    c.query_drop("SHOW FULL COLUMNS FROM t")?;
    let full = check(&mut c, "with the table")?;
    ensure!(
        full.0 > empty.0 && full.2 > empty.2,
        "the table shows in neither count: {full:?}, {empty:?} at start"
    );

    c.query_drop("DROP TABLE t")?;
    let dropped = check(&mut c, "after DROP")?;
    ensure!(
        dropped.2 < full.2,
        "the table's heap memory stayed: {dropped:?}, {full:?} before"
    );
    Ok(())
}
