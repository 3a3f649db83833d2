//! Memory truth, measured: where a table is full and what it holds then, on ENGINE=RHEAP and
//! ENGINE=MEMORY tables of one server, and for an internal GROUP BY with rheap and with stock
//! HEAP; then the index bytes of both engines for the same rows and keys.
//!
//! ```text
//! cargo run --release -p rheap-bench --bin table-limits [-- --rows N]
//! ```
//!
//! Prints three markdown tables:
//! - each table shape filled until "table is full" at `max_heap_table_size=16M`: rows, its
//!   DATA_LENGTH + INDEX_LENGTH, and how much the server's `Memory_used` grew (with
//!   `rheap_block_cache_size=0`, so that every block rheap takes is a new allocation);
//! - a GROUP BY over the distinct VARCHAR(100) utf8mb4 values of `--rows` rows at
//!   `tmp_table_size=max_heap_table_size=16M`: the session's peak memory over the statement
//!   (`Max_memory_used` minus `Memory_used` before) and the tables that went to disk;
//! - INDEX_LENGTH of RHEAP and MEMORY for the same rows and keys.
//!
//! rheap runs with its defaults (`rheap_table_size_limit=ACTUAL`); the stock GROUP BY with
//! `rheap_takeover=OFF`.

use anyhow::{ensure, Result};
use clap::Parser;
use mysql::prelude::Queryable;
use mysql::Conn;
use rheap_harness::server::{Options, Server};
use rheap_harness::sql::{global_status, session_status};

/// The limit of the "full" cases.
const LIMIT: u64 = 16 << 20;
/// `ER_RECORD_FILE_FULL`.
const TABLE_FULL: u16 = 1114;

/// Where tables are full and what they hold then, on RHEAP and MEMORY, and their index bytes.
#[derive(Debug, Parser)]
#[command(name = "table-limits")]
struct Args {
    /// Rows of the source table (distinct VARCHAR values of 10 to 30 characters).
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1000..))]
    rows: u64,
}

fn lengths(c: &mut Conn, table: &str) -> Result<(u64, u64)> {
    let v: Option<(u64, u64)> = c.query_first(format!(
        "SELECT DATA_LENGTH, INDEX_LENGTH FROM information_schema.TABLES \
         WHERE TABLE_SCHEMA = 'test' AND TABLE_NAME = '{table}'"
    ))?;
    Ok(v.unwrap_or((0, 0)))
}

/// Fills `CREATE TABLE t (columns) ENGINE=engine` from `select` until it is full: its rows,
/// its bytes (DATA_LENGTH + INDEX_LENGTH) and the growth of the server's `Memory_used`.
fn fill(c: &mut Conn, engine: &str, columns: &str, select: &str) -> Result<(u64, u64, u64)> {
    c.query_drop("DROP TABLE IF EXISTS t")?;
    let before = global_status(c, "MEMORY_USED")?;
    c.query_drop(format!("CREATE TABLE t ({columns}) ENGINE={engine}"))?;
    // Three copies of the source, so that even the narrowest rows fill the table.
    let copies = "JOIN (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) k";
    match c.query_drop(format!("INSERT INTO t {select} {copies}")) {
        Err(mysql::Error::MySqlError(e)) if e.code == TABLE_FULL => {}
        Err(e) => return Err(e.into()),
        Ok(()) => anyhow::bail!("{engine} ({columns}) never filled"),
    }
    let grown = global_status(c, "MEMORY_USED")?.saturating_sub(before);
    let rows: u64 = c.query_first("SELECT COUNT(*) FROM t")?.unwrap_or(0);
    let (data, index) = lengths(c, "t")?;
    Ok((rows, data + index, grown))
}

fn mib(bytes: u64) -> String {
    format!("{:.2} MiB", bytes as f64 / (1 << 20) as f64)
}

fn main() -> Result<()> {
    let Args { rows } = Args::parse();
    let mut opts = Options::with_plugin_loaded()?;
    opts.args.extend([
        "--max-recursive-iterations=100000000".to_string(),
        "--max-heap-table-size=4G".to_string(),
    ]);
    let server = Server::start(opts)?;
    let mut c = server.conn()?;
    eprintln!("table-limits: making {rows} source rows");
    c.query_drop(
        "CREATE TABLE src (id INT, s VARCHAR(100) CHARACTER SET utf8mb4, t TEXT) ENGINE=MyISAM",
    )?;
    c.query_drop(format!(
        "INSERT INTO src WITH RECURSIVE q(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM q WHERE n < {rows}) \
         SELECT n, CONCAT('name-', LPAD(n, 5 + n % 20, 'x')), REPEAT('t', n % 200) FROM q"
    ))?;

    println!(
        "## Tables filled until full, max_heap_table_size = {}\n",
        mib(LIMIT)
    );
    println!("| table | engine | rows | DATA + INDEX | ≤ limit | Memory_used grew |");
    println!("| --- | --- | --- | --- | --- | --- |");
    c.query_drop(format!("SET SESSION max_heap_table_size = {LIMIT}"))?;
    // No cache of free blocks: the blocks a table takes come from the server's allocator, and
    // show in Memory_used.
    c.query_drop("SET GLOBAL rheap_block_cache_size = 0")?;
    let shapes: [(&str, &str, &str); 5] = [
        ("INT", "a INT", "SELECT id FROM src"),
        (
            "INT, VARCHAR(100) utf8mb4",
            "a INT, s VARCHAR(100) CHARACTER SET utf8mb4",
            "SELECT id, s FROM src",
        ),
        ("INT, TEXT", "a INT, t TEXT", "SELECT id, t FROM src"),
        (
            "INT, HASH (a)",
            "a INT, KEY USING HASH (a)",
            "SELECT id FROM src",
        ),
        (
            "VARCHAR(100) utf8mb4, BTREE (s)",
            "s VARCHAR(100) CHARACTER SET utf8mb4, KEY USING BTREE (s)",
            "SELECT s FROM src",
        ),
    ];
    for (name, columns, select) in shapes {
        for engine in ["MEMORY", "RHEAP"] {
            if engine == "MEMORY" && columns.contains("TEXT") {
                println!("| {name} | {engine} | (MEMORY has no TEXT) | | | |");
                continue;
            }
            eprintln!("table-limits: {name} on {engine}");
            let (n, bytes, grown) = fill(&mut c, engine, columns, select)?;
            println!(
                "| {name} | {engine} | {n} | {} | {} | {} |",
                mib(bytes),
                if bytes <= LIMIT { "yes" } else { "**no**" },
                mib(grown)
            );
        }
    }
    c.query_drop("DROP TABLE IF EXISTS t")?;
    c.query_drop("SET SESSION max_heap_table_size = DEFAULT")?;
    c.query_drop("SET GLOBAL rheap_block_cache_size = DEFAULT")?;

    let distinct: u64 = c
        .query_first("SELECT COUNT(DISTINCT s) FROM src")?
        .unwrap_or(0);
    println!(
        "\n## GROUP BY over {distinct} distinct VARCHAR(100) utf8mb4 values, tmp_table_size = max_heap_table_size = {}\n",
        mib(LIMIT)
    );
    println!("| engine | peak over the statement | peak − limit | temporary tables on disk | moved to Aria by rheap |");
    println!("| --- | --- | --- | --- | --- |");
    for (label, takeover) in [("stock HEAP", "OFF"), ("rheap", "INTERNAL")] {
        eprintln!("table-limits: GROUP BY on {label}");
        c.query_drop(format!("SET GLOBAL rheap_takeover = {takeover}"))?;
        let mut s = server.conn()?;
        s.query_drop(format!(
            "SET SESSION tmp_table_size = {LIMIT}, max_heap_table_size = {LIMIT}"
        ))?;
        let converted = global_status(&mut s, "RHEAP_INTERNAL_TABLES_CONVERTED")?;
        s.query_drop("FLUSH STATUS")?;
        let start = session_status(&mut s, "MEMORY_USED")?;
        let groups: Option<u64> =
            s.query_first("SELECT COUNT(*) FROM (SELECT s, COUNT(*) FROM src GROUP BY s) d")?;
        ensure!(groups == Some(distinct), "{label}: {groups:?} groups");
        let peak = session_status(&mut s, "MAX_MEMORY_USED")?.saturating_sub(start);
        let disk = session_status(&mut s, "CREATED_TMP_DISK_TABLES")?;
        let moved = global_status(&mut s, "RHEAP_INTERNAL_TABLES_CONVERTED")? - converted;
        let over = (peak as f64 - LIMIT as f64) / (1 << 20) as f64;
        println!(
            "| {label} | {} | {over:+.2} MiB | {disk} | {moved} |",
            mib(peak)
        );
    }
    c.query_drop("SET GLOBAL rheap_takeover = DEFAULT")?;

    println!("\n## Index bytes for the same rows and keys\n");
    println!("MEMORY sizes its blocks from max_heap_table_size: its tables are made at the smallest power of two that holds their rows. RHEAP's blocks do not depend on it: its tables are made at 4G, so that none is full.\n");
    println!("| rows and keys | max_heap_table_size | MEMORY INDEX_LENGTH | RHEAP INDEX_LENGTH | RHEAP / MEMORY |");
    println!("| --- | --- | --- | --- | --- |");
    let cases: [(&str, u64, &str, String); 3] = [
        (
            "958 rows, (a) HASH and (b) BTREE",
            16 << 20,
            "a INT, b CHAR(20), KEY (a), KEY USING BTREE (b)",
            "SELECT id, CONCAT('row', id) FROM src WHERE id <= 958".into(),
        ),
        (
            "1,000,000 rows, HASH on an INT",
            64 << 20,
            "a INT, KEY USING HASH (a)",
            format!("SELECT id FROM src WHERE id <= {}", rows.min(1_000_000)),
        ),
        (
            "1,000,000 rows, BTREE on a VARCHAR(100) utf8mb4 of 10-30 characters",
            1 << 30,
            "s VARCHAR(100) CHARACTER SET utf8mb4, KEY USING BTREE (s)",
            format!("SELECT s FROM src WHERE id <= {}", rows.min(1_000_000)),
        ),
    ];
    for (name, size, columns, select) in cases {
        let mut index = [0u64; 2];
        for (i, engine) in ["MEMORY", "RHEAP"].iter().enumerate() {
            let limit = if i == 0 { size } else { 4 << 30 };
            c.query_drop(format!("SET SESSION max_heap_table_size = {limit}"))?;
            eprintln!("table-limits: index bytes, {name}, {engine}");
            c.query_drop("DROP TABLE IF EXISTS t")?;
            c.query_drop(format!("CREATE TABLE t ({columns}) ENGINE={engine}"))?;
            c.query_drop(format!("INSERT INTO t {select}"))?;
            index[i] = lengths(&mut c, "t")?.1;
        }
        println!(
            "| {name} | {} | {} | {} | {:.2} |",
            mib(size),
            index[0],
            index[1],
            index[1] as f64 / index[0].max(1) as f64
        );
    }
    c.query_drop("DROP TABLE IF EXISTS t")?;
    Ok(())
}
