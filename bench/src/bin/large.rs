//! Large temporary tables: queries whose internal tables hold hundreds of thousands of rows,
//! on each system at each size, timed per statement.
//!
//! ```text
//! cargo run --release -p rheap-bench --bin large [-- --full] [--rows N] [--system NAME]...
//!     [--size 16M]... [--clients 1,4] [--reps N] [--workload NAME]...
//! ```
//!
//! A seeded InnoDB table `big (id, s, g, v)`: `s` a distinct VARCHAR(100) utf8mb4 string of 15
//! to 35 characters per row (one in ten with a non-ASCII letter), `g` one of 1000 groups, `v`
//! a number. 200,000 rows, 1,000,000 with `--full`. Each system (the benchmark's adapters:
//! `stock`, `rheap`, `stock-aria`, ...) runs as a private server per size
//! (`tmp_table_size` = `max_heap_table_size` = the size, as in the benchmark). The servers of a
//! size run at the same time, each waiting after its load until InnoDB has no dirty page left.
//! A workload then runs in rounds: in each, the systems take turns, each running the statement
//! once on each of `--clients` sessions at once. The first round warms up and is not timed;
//! `--reps` rounds are, in alternating order of systems, so that a slow spell of the machine
//! falls on every system alike.
//!
//! Prints a markdown table: per workload, size, clients and system, the median seconds per
//! statement, the internal temporary tables each statement put on disk
//! (`Created_tmp_disk_tables`), and the most a session's memory grew over one statement
//! (`Max_memory_used` minus `Memory_used` before it, after `FLUSH STATUS`). Every statement's
//! result is compared with the first system's; a difference stops the run.

use anyhow::{bail, ensure, Context, Result};
use clap::Parser;
use mysql::prelude::Queryable;
use mysql::Conn;
use rheap_bench::system::{self, Size};
use rheap_harness::server::Server;
use rheap_harness::sql::{global_status, rheap_available, session_status};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Large temporary tables on each system at each size.
#[derive(Debug, Parser)]
#[command(name = "large")]
struct Args {
    /// 1,000,000 rows (default 200,000) and five repetitions (default three).
    #[arg(long)]
    full: bool,
    /// Rows of the table (overrides --full's).
    #[arg(long)]
    rows: Option<u64>,
    /// Systems, the first the reference of results [default: stock rheap].
    #[arg(long)]
    system: Vec<String>,
    /// tmp_table_size = max_heap_table_size [default: 16M 256M 16G].
    #[arg(long)]
    size: Vec<String>,
    /// Sessions running the workload at once.
    #[arg(long, value_delimiter = ',', default_value = "1,4")]
    clients: Vec<usize>,
    /// Statements per session per cell (overrides --full's).
    #[arg(long)]
    reps: Option<usize>,
    /// Workloads [default: every one].
    #[arg(long)]
    workload: Vec<String>,
}

/// The workloads: name, statement (one row of aggregates, compared across systems).
const WORKLOADS: [(&str, &str); 5] = [
    (
        "group_by",
        "SELECT COUNT(*), SUM(c), SUM(t) FROM \
         (SELECT s, COUNT(*) AS c, SUM(v) AS t FROM big GROUP BY s) AS d",
    ),
    (
        "distinct",
        "SELECT COUNT(*), SUM(g) FROM (SELECT DISTINCT s, g FROM big) AS d",
    ),
    (
        "union",
        "SELECT COUNT(*), SUM(LENGTH(s)) FROM \
         (SELECT s FROM big UNION SELECT CONCAT(s, 'u') FROM big) AS d",
    ),
    (
        "derived_join",
        "SELECT COUNT(*), SUM(d.c) FROM big AS b JOIN \
         (SELECT s, COUNT(*) AS c FROM big GROUP BY s) AS d ON d.s = b.s",
    ),
    (
        "window",
        "SELECT COUNT(*), SUM(r), MAX(r) FROM \
         (SELECT ROW_NUMBER() OVER (PARTITION BY g ORDER BY s) AS r FROM big) AS d",
    ),
];

/// A size as the adapters take it.
fn size(s: &str) -> Size {
    Size(Box::leak(s.to_string().into_boxed_str()))
}

fn start(name: &str, size: Size, rows: u64) -> Result<Server> {
    let sut = system::by_name(name).with_context(|| format!("no system {name}"))?;
    let mut opts = sut.options()?;
    opts.args.extend(sut.size_args(size));
    opts.args.push("--innodb-flush-log-at-trx-commit=0".into());
    opts.args.push("--innodb-buffer-pool-size=512M".into());
    let server = Server::start(opts).with_context(|| format!("starting {name} {}", size.0))?;
    let mut c = server.conn()?;
    sut.verify(&mut c)?;
    c.query_drop(
        "CREATE TABLE big (id INT PRIMARY KEY, s VARCHAR(100) CHARACTER SET utf8mb4 NOT NULL, \
         g INT NOT NULL, v INT NOT NULL) ENGINE=InnoDB",
    )?;
    // Distinct strings of 15 to 35 characters: a prefix, the id in a scrambled order, and
    // padding; one in ten with a non-ASCII letter.
    c.query_drop(format!(
        "INSERT INTO big SELECT seq, \
         CONCAT(IF(seq % 10 = 0, 'ü', 'u'), 'ser-', (seq * 7919) % {rows} + 1, '-', \
         REPEAT(CHAR(97 + seq % 26), 5 + seq % 21)), seq % 1000, (seq * 31) % 10007 \
         FROM seq_1_to_{rows}"
    ))?;
    c.query_drop("ANALYZE TABLE big")?;
    Ok(server)
}

/// One statement's run.
struct Outcome {
    /// The result row, as text.
    result: String,
    secs: f64,
    /// Internal temporary tables it put on disk.
    disk: u64,
    /// The most the session's memory grew over it.
    peak: u64,
}

/// One statement on `c`.
fn run_one(c: &mut Conn, sql: &str) -> Result<Outcome> {
    c.query_drop("FLUSH STATUS")?;
    let before = session_status(c, "Memory_used")?;
    let t = Instant::now();
    let row: mysql::Row = c.query_first(sql)?.context("no row")?;
    let secs = t.elapsed().as_secs_f64();
    let disk = session_status(c, "Created_tmp_disk_tables")?;
    let peak = session_status(c, "Max_memory_used")?.saturating_sub(before);
    let result = (0..row.len())
        .map(|i| {
            rheap_harness::sql::value_text(&row.as_ref(i).cloned().unwrap_or(mysql::Value::NULL))
        })
        .collect::<Vec<_>>()
        .join(" ");
    Ok(Outcome {
        result,
        secs,
        disk,
        peak,
    })
}

/// One system's figures in one cell.
struct Cell {
    workload: &'static str,
    size: String,
    clients: usize,
    system: String,
    /// Median seconds per statement.
    median: f64,
    /// Most temporary tables on disk per statement.
    disk: u64,
    /// Most a session's memory grew over a statement.
    peak: u64,
    /// On rheap, the most bytes one internal table held.
    largest: Option<u64>,
}

/// Runs `run` while a session of its own samples `information_schema.RHEAP_TABLES` every
/// 10 ms; returns `run`'s result and the most bytes (rows and indexes) that one internal table
/// of another session held in a sample. A lower bound: a table may peak between two samples.
fn watching_tables<T>(server: &Server, run: impl FnOnce() -> Result<T>) -> Result<(T, u64)> {
    let mut c = server.conn()?;
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let watcher = s.spawn(|| -> Result<u64> {
            let mut most = 0;
            while !stop.load(Ordering::Relaxed) {
                let bytes: Option<u64> = c
                    .query_first(
                        "SELECT MAX(DATA_BYTES + INDEX_BYTES) FROM information_schema.RHEAP_TABLES \
                         WHERE KIND = 'INTERNAL' AND CONNECTION_ID <> CONNECTION_ID()",
                    )?
                    .flatten();
                most = most.max(bytes.unwrap_or(0));
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Ok(most)
        });
        let r = run();
        stop.store(true, Ordering::Relaxed);
        let most = watcher
            .join()
            .unwrap_or_else(|_| bail!("the table watcher panicked"))?;
        Ok((r?, most))
    })
}

/// One round: the statement once on each of `conns` at the same time.
fn round_of(conns: &mut [Conn], sql: &str) -> Result<Vec<Outcome>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = conns
            .iter_mut()
            .map(|c| s.spawn(move || run_one(c, sql)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| bail!("a client panicked")))
            .collect()
    })
}

/// Waits until InnoDB has written every page the load dirtied and purged its history, so that
/// its background threads do not take the CPU from the first cells. Shows progress.
fn settle(server: &Server, what: &str) -> Result<()> {
    let mut c = server.conn()?;
    c.query_drop("SET GLOBAL innodb_max_purge_lag_wait = 0")?;
    c.query_drop("SET GLOBAL innodb_max_dirty_pages_pct = 0")?;
    let t = Instant::now();
    loop {
        let dirty = global_status(&mut c, "Innodb_buffer_pool_pages_dirty")?;
        if dirty == 0 {
            return Ok(());
        }
        ensure!(
            t.elapsed().as_secs() < 300,
            "{what}: {dirty} dirty InnoDB pages after 300 s"
        );
        eprintln!("large: {what}: waiting for {dirty} dirty InnoDB pages to be written");
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

fn main() -> Result<()> {
    let args = Args::parse();
    let rows = args
        .rows
        .unwrap_or(if args.full { 1_000_000 } else { 200_000 });
    let reps = args.reps.unwrap_or(if args.full { 5 } else { 3 });
    let systems = if args.system.is_empty() {
        vec!["stock".to_string(), "rheap".to_string()]
    } else {
        args.system.clone()
    };
    let sizes = if args.size.is_empty() {
        vec!["16M".to_string(), "256M".to_string(), "16G".to_string()]
    } else {
        args.size.clone()
    };
    let workloads: Vec<_> = WORKLOADS
        .iter()
        .filter(|(n, _)| args.workload.is_empty() || args.workload.iter().any(|w| w == n))
        .collect();
    ensure!(!workloads.is_empty(), "no such workload");

    let mut cells: Vec<Cell> = Vec::new();
    let mut reference: Vec<Option<String>> = vec![None; workloads.len()];
    for size_name in &sizes {
        // Every system's server of this size runs at once, idle but for its turn, so that each
        // repetition times the systems one after the other under the same machine conditions.
        let mut servers = Vec::new();
        for sys in &systems {
            eprintln!("large: {sys} {size_name}: loading {rows} rows");
            let server = start(sys, size(size_name), rows)?;
            settle(&server, &format!("{sys} {size_name}"))?;
            let rheap = rheap_available(&mut server.conn()?)?;
            servers.push((sys, server, rheap));
        }
        for (w, (name, sql)) in workloads.iter().enumerate() {
            for &clients in &args.clients {
                eprintln!("large: {size_name}: {name}, {clients} client(s), {reps} rounds");
                let mut conns = servers
                    .iter()
                    .map(|(_, server, _)| {
                        (0..clients)
                            .map(|_| server.conn())
                            .collect::<Result<Vec<_>>>()
                    })
                    .collect::<Result<Vec<_>>>()?;
                let mut outcomes: Vec<Vec<Outcome>> = servers.iter().map(|_| Vec::new()).collect();
                let mut largest: Vec<Option<u64>> = vec![None; servers.len()];
                // Round 0 warms each server up and is not timed (on rheap it measures the
                // largest table); a round's order of systems alternates, so that none always
                // follows the same one.
                for round in 0..=reps {
                    let mut order: Vec<usize> = (0..servers.len()).collect();
                    if round % 2 == 1 {
                        order.reverse();
                    }
                    for i in order {
                        let (sys, server, rheap) = &servers[i];
                        let done = match round == 0 && *rheap {
                            true => watching_tables(server, || round_of(&mut conns[i], sql)).map(
                                |(done, most)| {
                                    largest[i] = Some(most);
                                    done
                                },
                            ),
                            false => round_of(&mut conns[i], sql),
                        }
                        .with_context(|| format!("{sys} {size_name} {name}"))?;
                        for Outcome { result, .. } in &done {
                            match &reference[w] {
                                None => reference[w] = Some(result.clone()),
                                Some(r) if r == result => {}
                                Some(r) => bail!(
                                    "{name} on {sys} {size_name}: result {result}, {} gave {r}",
                                    systems[0]
                                ),
                            }
                        }
                        if round > 0 {
                            outcomes[i].extend(done);
                        }
                    }
                }
                for (((sys, _, _), all), largest) in servers.iter().zip(&outcomes).zip(largest) {
                    let mut secs: Vec<f64> = all.iter().map(|a| a.secs).collect();
                    secs.sort_by(f64::total_cmp);
                    cells.push(Cell {
                        workload: name,
                        size: size_name.clone(),
                        clients,
                        system: sys.to_string(),
                        median: secs[secs.len() / 2],
                        disk: all.iter().map(|a| a.disk).max().unwrap_or(0),
                        peak: all.iter().map(|a| a.peak).max().unwrap_or(0),
                        largest,
                    });
                }
            }
        }
    }

    println!("## Large temporary tables, {rows} rows, {reps} statements per session per cell\n");
    println!("Median seconds per statement; temporary tables on disk per statement; the most a session's memory grew over a statement (MiB); on rheap, the largest internal table a statement held, rows and indexes (MiB, sampled every 10 ms in the untimed round).\n");
    let mut header = "| workload | size | clients |".to_string();
    let mut rule = "| --- | --- | --- |".to_string();
    for sys in &systems {
        header.push_str(&format!(
            " {sys} s | {sys} disk | {sys} MiB | {sys} table MiB |"
        ));
        rule.push_str(" --- | --- | --- | --- |");
    }
    if systems.len() > 1 {
        header.push_str(&format!(" {} / {} |", systems[0], systems[1]));
        rule.push_str(" --- |");
    }
    println!("{header}\n{rule}");
    for (name, _) in &workloads {
        for size_name in &sizes {
            for &clients in &args.clients {
                let of = |sys: &str| {
                    cells.iter().find(|c| {
                        c.workload == *name
                            && &c.size == size_name
                            && c.clients == clients
                            && c.system == sys
                    })
                };
                let mib = |b: u64| format!("{:.1}", b as f64 / (1 << 20) as f64);
                let mut line = format!("| {name} | {size_name} | {clients} |");
                for sys in &systems {
                    if let Some(c) = of(sys) {
                        line.push_str(&format!(
                            " {:.3} | {} | {} | {} |",
                            c.median,
                            c.disk,
                            mib(c.peak),
                            c.largest.map_or("–".to_string(), mib)
                        ));
                    }
                }
                if systems.len() > 1 {
                    if let (Some(a), Some(b)) = (of(&systems[0]), of(&systems[1])) {
                        line.push_str(&format!(" {:.2}× |", a.median / b.median));
                    }
                }
                println!("{line}");
            }
        }
    }
    Ok(())
}
