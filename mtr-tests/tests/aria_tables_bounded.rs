//! A statement's tables in Aria's place (`rheap_takeover_blob_tables`) hold no more than their
//! limit and a block, and all of them together stay within `rheap_max_memory` under 16
//! sessions at once: past either, a table moves to Aria, and every session gets the result it
//! gets alone.

use anyhow::{ensure, Context, Result};
use mysql::prelude::Queryable;
use mysql::Conn;
use rheap_harness::server::Server;
use rheap_harness::sql::{global_status, session_status};

/// The largest block a table takes (core's `alloc::policy::MAX_BLOCK`).
const MAX_BLOCK: u64 = 1 << 20;
/// COUNT(DISTINCT) over 3,000 TEXT values of about 2 KB: one table of about 7 MB in memory.
const ONE_TABLE: &str = "SELECT COUNT(DISTINCT body), 0 FROM posts";
/// A DISTINCT in a derived table: two such tables at once.
const TWO_TABLES: &str =
    "SELECT COUNT(*), SUM(LENGTH(body)) FROM (SELECT DISTINCT body FROM posts) d";

/// A server with rheap and the posts, restarted so that `Rheap_memory_used_peak` counts only
/// what comes after.
fn server() -> Result<Server> {
    let mut server = Server::with_rheap()?;
    let mut c = server.conn()?;
    c.query_drop("CREATE TABLE posts (id INT PRIMARY KEY, body TEXT) ENGINE=InnoDB")?;
    c.query_drop(
        "INSERT INTO posts SELECT seq, CONCAT(seq, REPEAT(' words of a post', 100 + seq % 50)) \
         FROM seq_1_to_3000",
    )?;
    drop(c);
    server.restart()?;
    Ok(server)
}

/// `query`'s row and how many tables it put on disk.
fn run(c: &mut Conn, query: &str) -> Result<((u64, u64), u64)> {
    let disk = session_status(c, "Created_tmp_disk_tables")?;
    let row = c.query_first(query)?.context("no row")?;
    Ok((row, session_status(c, "Created_tmp_disk_tables")? - disk))
}

#[test]
fn a_table_holds_its_limit_and_a_block_then_moves() -> Result<()> {
    let server = server()?;
    let limit = 2 << 20;
    let mut c = server.conn()?;
    c.query_drop(format!(
        "SET SESSION tmp_memory_table_size = {limit}, max_heap_table_size = {limit}"
    ))?;
    let (moved, disk) = run(&mut c, ONE_TABLE)?;
    ensure!(disk == 1, "{disk} tables on disk past {limit}");
    // A fresh server: the peak is this statement's table's.
    let peak = global_status(&mut c, "Rheap_memory_used_peak")?;
    let mut c = server.conn()?;
    let (whole, disk) = run(&mut c, ONE_TABLE)?;
    ensure!(whole.0 == 3000, "{whole:?}");
    ensure!(disk == 0, "{disk} tables on disk at the default limit");
    ensure!(
        moved == whole,
        "{moved:?} after the move, {whole:?} in memory"
    );
    let in_memory = global_status(&mut c, "Rheap_memory_used_peak")?;
    println!("peak {peak} bytes with a limit of {limit}; {in_memory} at the default limit");
    ensure!(
        in_memory > 2 * limit,
        "the table in memory held {in_memory} bytes"
    );
    ensure!(
        peak <= limit + MAX_BLOCK,
        "peak {peak} past the limit {limit} and a block"
    );
    Ok(())
}

#[test]
fn sixteen_sessions_stay_within_the_budget() -> Result<()> {
    let server = server()?;
    let mut c = server.conn()?;
    let (alone, _) = run(&mut c, TWO_TABLES)?;
    let one_statement = global_status(&mut c, "Rheap_memory_used_peak")?;
    // Room for two statements: sixteen at once need eight times that.
    let budget = 2 * one_statement;
    c.query_drop(format!("SET GLOBAL rheap_max_memory = {budget}"))?;
    let refusals = global_status(&mut c, "Rheap_memory_budget_refusals")?;
    let moved = global_status(&mut c, "Rheap_aria_tables_moved")?;
    let results = std::thread::scope(|s| {
        let handles: Vec<_> = (0..16)
            .map(|_| {
                s.spawn(|| -> Result<Vec<((u64, u64), u64)>> {
                    let mut c = server.conn()?;
                    (0..3).map(|_| run(&mut c, TWO_TABLES)).collect()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a session panicked"))
            .collect::<Result<Vec<_>>>()
    })?;
    let runs: Vec<_> = results.into_iter().flatten().collect();
    ensure!(
        runs.iter().all(|(r, _)| *r == alone),
        "a session got another result"
    );
    let on_disk: u64 = runs.iter().map(|(_, d)| d).sum();
    let peak = global_status(&mut c, "Rheap_memory_used_peak")?;
    let cores = std::thread::available_parallelism()?.get() as u64;
    println!(
        "one statement's tables {one_statement} bytes; budget {budget}; peak {peak} under 16 \
         sessions; {on_disk} tables moved to Aria over {} statements; {cores} cores",
        runs.len()
    );
    ensure!(on_disk > 0, "no table moved to Aria under the budget");
    ensure!(global_status(&mut c, "Rheap_memory_budget_refusals")? > refusals);
    ensure!(global_status(&mut c, "Rheap_aria_tables_moved")? - moved == on_disk);
    // Blocks taken at once on several CPUs may pass the budget by one each.
    ensure!(
        peak <= budget + cores * MAX_BLOCK,
        "peak {peak} past the budget {budget} and a block per core"
    );
    Ok(())
}
