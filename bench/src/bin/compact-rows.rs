//! Compact rows, measured: the same rows in an ENGINE=RHEAP and an ENGINE=MEMORY table on one
//! server, side by side. `cargo run --release -p rheap-bench --bin compact-rows [-- ROWS]`
//! (default 1,000,000 rows of `(id INT, name VARCHAR(255) utf8mb4)` holding 10 to 30
//! characters; `--help` says so too). Prints DATA_LENGTH, insert and full-scan times per engine
//! (median of 3 interleaved rounds) as a markdown table.

use anyhow::{ensure, Result};
use clap::Parser;
use mysql::prelude::Queryable;
use rheap_harness::server::{Options, Server};
use std::time::{Duration, Instant};

const ENGINES: [&str; 2] = ["MEMORY", "RHEAP"];
const ROUNDS: usize = 3;

/// The same rows in an ENGINE=RHEAP and an ENGINE=MEMORY table on one server, side by side:
/// DATA_LENGTH, insert and full-scan times per engine (median of interleaved rounds), as a
/// markdown table.
#[derive(Debug, Parser)]
#[command(name = "compact-rows")]
struct Args {
    /// Rows of (id INT, name VARCHAR(255) utf8mb4), names of 10 to 30 characters.
    #[arg(default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..))]
    rows: u64,
}

fn main() -> Result<()> {
    let Args { rows } = Args::parse();
    let mut opts = Options::with_plugin_loaded()?;
    opts.args.extend([
        "--max-heap-table-size=4G".to_string(),
        "--max-recursive-iterations=100000000".to_string(),
    ]);
    let server = Server::start(opts)?;
    let mut c = server.conn()?;
    // The source rows, in InnoDB-free MyISAM so that both engines read the same input.
    eprintln!("compact-rows: making {rows} source rows");
    c.query_drop(
        "CREATE TABLE src (id INT, name VARCHAR(255) CHARACTER SET utf8mb4) ENGINE=MyISAM",
    )?;
    c.query_drop(format!(
        "INSERT INTO src WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < {rows}) \
         SELECT n, CONCAT('name-', LPAD(n, 5 + n % 20, 'x')) FROM s"
    ))?;
    let chars: (u64, u64) = c
        .query_first("SELECT MIN(CHAR_LENGTH(name)), MAX(CHAR_LENGTH(name)) FROM src")?
        .unwrap_or((0, 0));
    let mut insert = [Vec::new(), Vec::new()];
    let mut scan = [Vec::new(), Vec::new()];
    let mut length = [0u64; 2];
    for round in 0..ROUNDS {
        for (i, engine) in ENGINES.iter().enumerate() {
            eprintln!("compact-rows: round {}/{ROUNDS}, {engine}", round + 1);
            c.query_drop("DROP TABLE IF EXISTS t")?;
            c.query_drop(format!(
                "CREATE TABLE t (id INT, name VARCHAR(255) CHARACTER SET utf8mb4) ENGINE={engine}"
            ))?;
            let t0 = Instant::now();
            c.query_drop("INSERT INTO t SELECT * FROM src")?;
            insert[i].push(t0.elapsed());
            let t0 = Instant::now();
            let n: u64 = c
                .query_first("SELECT COUNT(*) FROM t WHERE name LIKE '%z%'")?
                .unwrap_or(1);
            scan[i].push(t0.elapsed());
            ensure!(n == 0, "the scan found rows it should not");
            length[i] = c
                .query_first(
                    "SELECT DATA_LENGTH FROM information_schema.TABLES WHERE TABLE_NAME = 't'",
                )?
                .unwrap_or(0);
            let count: u64 = c.query_first("SELECT COUNT(*) FROM t")?.unwrap_or(0);
            ensure!(count == rows, "{engine} holds {count} rows, not {rows}");
        }
    }
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    println!(
        "{rows} rows of (id INT, name VARCHAR(255) utf8mb4), {}-{} characters; median of {ROUNDS} interleaved rounds\n",
        chars.0, chars.1
    );
    println!("| engine | DATA_LENGTH | bytes/row | INSERT ... SELECT | full scan |");
    println!("| --- | --- | --- | --- | --- |");
    for (i, engine) in ENGINES.iter().enumerate() {
        println!(
            "| {engine} | {} | {:.1} | {:.3} s | {:.3} s |",
            length[i],
            length[i] as f64 / rows as f64,
            median(&mut insert[i]).as_secs_f64(),
            median(&mut scan[i]).as_secs_f64()
        );
    }
    println!(
        "\nRHEAP/MEMORY: DATA_LENGTH {:.3}, insert {:.3}, scan {:.3}",
        length[1] as f64 / length[0] as f64,
        insert[1][ROUNDS / 2].as_secs_f64() / insert[0][ROUNDS / 2].as_secs_f64(),
        scan[1][ROUNDS / 2].as_secs_f64() / scan[0][ROUNDS / 2].as_secs_f64()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn rows_default_to_a_million_and_are_at_least_one() {
        Args::command().debug_assert();
        assert_eq!(
            Args::try_parse_from(["compact-rows"]).unwrap().rows,
            1_000_000
        );
        assert_eq!(Args::try_parse_from(["compact-rows", "5"]).unwrap().rows, 5);
        assert!(Args::try_parse_from(["compact-rows", "0"]).is_err());
        assert!(Args::try_parse_from(["compact-rows", "5", "6"]).is_err());
        let help = Args::command().render_help().to_string();
        assert!(help.contains("[default: 1000000]"), "{help}");
    }
}
