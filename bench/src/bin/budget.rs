//! The server-wide budget, measured: `rheap_max_memory` against many sessions whose internal
//! temporary tables together want far more than it allows.
//!
//! ```text
//! cargo run --release -p rheap-bench --bin budget [-- --sessions 16 --budget-mib 256 --rows N]
//! ```
//!
//! One server with the plugin loaded and `rheap_max_memory` set. Each of `--sessions` sessions
//! runs the same GROUP BY over a VARCHAR(100) utf8mb4 column, whose internal table alone takes
//! about 64 MiB of rheap's blocks at `--rows` source rows, at `tmp_table_size` large enough
//! that only the budget can move it to disk. First the reference: the statement on stock HEAP
//! (`rheap_takeover=OFF`), then on rheap alone, then all sessions at once, twice: on a server
//! that has run no such round yet (cold), and again (warm: the server's own pools, such as
//! Aria's page cache and the C library's arenas, already hold what the round touches).
//!
//! Prints a markdown table per round: every session's result against stock's, the tables that
//! went to disk, `Rheap_memory_used_peak` against the budget plus one 4 MiB block per session,
//! and mariadbd's peak resident set over the round (`VmHWM`, reset before it through
//! `/proc/PID/clear_refs`) minus its resident set before, against 1.1 times the budget.
//! Exits non-zero when a session fails or its result differs.

use anyhow::{bail, ensure, Context, Result};
use clap::Parser;
use mysql::prelude::Queryable;
use mysql::Conn;
use rheap_harness::server::{Options, Server};

const MIB: u64 = 1 << 20;
/// The largest block rheap takes (policy::MAX_BLOCK).
const BLOCK: u64 = 4 * MIB;

/// The server-wide budget against sessions that want more than it.
#[derive(Debug, Parser)]
#[command(name = "budget")]
struct Args {
    /// Sessions running the GROUP BY at once.
    #[arg(long, default_value_t = 16)]
    sessions: usize,
    /// rheap_max_memory, in MiB.
    #[arg(long, default_value_t = 256)]
    budget_mib: u64,
    /// Rows of the source table, each a distinct group.
    #[arg(long, default_value_t = 150_000)]
    rows: u64,
}

const QUERY: &str = "SELECT s, COUNT(*), SUM(id) FROM src GROUP BY s";

type Groups = Vec<(String, u64, u64)>;

fn status(c: &mut Conn, scope: &str, name: &str) -> Result<u64> {
    let v: Option<u64> = c.query_first(format!(
        "SELECT VARIABLE_VALUE FROM information_schema.{scope}_STATUS WHERE VARIABLE_NAME = '{name}'"
    ))?;
    v.with_context(|| format!("no status variable {name}"))
}

/// A session ready for the GROUP BY: its limits large enough that only the budget moves its
/// table to disk.
fn session(server: &Server) -> Result<Conn> {
    let mut c = server.conn()?;
    c.query_drop(
        "SET SESSION tmp_table_size = 1024 * 1024 * 1024, max_heap_table_size = 1024 * 1024 * 1024",
    )?;
    Ok(c)
}

/// The GROUP BY's groups, sorted, and the tables it put on disk.
fn group_by(c: &mut Conn) -> Result<(Groups, u64)> {
    let disk = status(c, "SESSION", "CREATED_TMP_DISK_TABLES")?;
    let mut rows: Groups = c.query(QUERY)?;
    rows.sort_unstable();
    Ok((
        rows,
        status(c, "SESSION", "CREATED_TMP_DISK_TABLES")? - disk,
    ))
}

/// A field of mariadbd's /proc status, in bytes.
fn proc_status(pid: u32, field: &str) -> Result<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let line = text
        .lines()
        .find(|l| l.starts_with(field))
        .with_context(|| format!("no {field} in /proc/{pid}/status"))?;
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .context("malformed line")?
        .parse()?;
    Ok(kb * 1024)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / MIB as f64)
}

/// All sessions at once; prints the round's table row.
fn round(server: &Server, label: &str, reference: &Groups, args: &Args) -> Result<bool> {
    let pid = server.pid().context("mariadbd has no pid")?;
    let mut sessions = (0..args.sessions)
        .map(|_| session(server))
        .collect::<Result<Vec<_>>>()?;
    let mut c = server.conn()?;
    // Rheap_memory_used_peak is the highest since start-up: the round's is only known when it
    // passes what rounds before it reached, so the figure printed is the highest so far.
    let rss_before = proc_status(pid, "VmRSS:")?;
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5")
        .context("resetting mariadbd's VmHWM (/proc/PID/clear_refs needs root)")?;
    let refusals = status(&mut c, "GLOBAL", "RHEAP_MEMORY_BUDGET_REFUSALS")?;
    let outcomes: Vec<Result<(Groups, u64)>> = std::thread::scope(|s| {
        let handles: Vec<_> = sessions
            .iter_mut()
            .map(|c| s.spawn(move || group_by(c)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| bail!("a session's thread panicked"))
            })
            .collect()
    });
    let rss_peak = proc_status(pid, "VmHWM:")?;
    let peak = status(&mut c, "GLOBAL", "RHEAP_MEMORY_USED_PEAK")?;
    let refused = status(&mut c, "GLOBAL", "RHEAP_MEMORY_BUDGET_REFUSALS")? - refusals;
    let mut same = 0;
    let mut disk_sessions = 0;
    let mut failed = Vec::new();
    for (i, o) in outcomes.into_iter().enumerate() {
        match o {
            Ok((rows, disk)) => {
                same += usize::from(&rows == reference);
                disk_sessions += usize::from(disk > 0);
            }
            Err(e) => failed.push(format!("session {i}: {e:#}")),
        }
    }
    let budget = args.budget_mib * MIB;
    let peak_bound = budget + args.sessions as u64 * BLOCK;
    let grown = rss_peak.saturating_sub(rss_before);
    let rss_bound = budget + budget / 10;
    println!(
        "| {label} | {}/{} | {}/{} | {disk_sessions} | {refused} | {} | {} | {} | {} | {} | {} |",
        args.sessions - failed.len(),
        args.sessions,
        same,
        args.sessions,
        mib(peak),
        mib(peak_bound),
        if peak <= peak_bound { "yes" } else { "**no**" },
        mib(rss_before),
        mib(grown),
        if grown <= rss_bound { "yes" } else { "**no**" },
    );
    for f in &failed {
        eprintln!("budget: {label}: {f}");
    }
    Ok(failed.is_empty() && same == args.sessions)
}

fn main() -> Result<()> {
    let args = Args::parse();
    let budget = args.budget_mib * MIB;
    let mut opts = Options::with_plugin_loaded()?;
    opts.args.extend([
        "--max-recursive-iterations=100000000".to_string(),
        format!("--rheap-max-memory={budget}"),
        "--rheap-takeover=INTERNAL".to_string(),
    ]);
    let server = Server::start(opts)?;
    let pid = server.pid().context("mariadbd has no pid")?;
    let mut c = server.conn()?;
    eprintln!("budget: making {} source rows", args.rows);
    c.query_drop("CREATE TABLE src (id INT, s VARCHAR(100) CHARACTER SET utf8mb4) ENGINE=MyISAM")?;
    c.query_drop(format!(
        "INSERT INTO src WITH RECURSIVE q(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM q WHERE n < {}) \
         SELECT n, CONCAT('group-', LPAD(n, 10 + n % 20, 'x')) FROM q",
        args.rows
    ))?;

    eprintln!("budget: the reference, on stock HEAP");
    c.query_drop("SET GLOBAL rheap_takeover = OFF")?;
    let (reference, disk) = group_by(&mut session(&server)?)?;
    ensure!(
        reference.len() as u64 == args.rows,
        "{} groups",
        reference.len()
    );
    ensure!(disk == 0, "stock's table went to disk");
    c.query_drop("SET GLOBAL rheap_takeover = INTERNAL")?;

    eprintln!("budget: one session on rheap, no budget");
    c.query_drop("SET GLOBAL rheap_max_memory = 0")?;
    let before = status(&mut c, "GLOBAL", "RHEAP_MEMORY_USED")?;
    let peak_before = status(&mut c, "GLOBAL", "RHEAP_MEMORY_USED_PEAK")?;
    let (alone, disk) = group_by(&mut session(&server)?)?;
    ensure!(alone == reference, "rheap's result differs from stock's");
    ensure!(disk == 0, "rheap's table went to disk without a budget");
    let table = status(&mut c, "GLOBAL", "RHEAP_MEMORY_USED_PEAK")?.saturating_sub(before);
    ensure!(
        peak_before <= before + table,
        "the peak before was above one table"
    );
    c.query_drop(format!("SET GLOBAL rheap_max_memory = {budget}"))?;

    println!(
        "## {} sessions, each a GROUP BY of {} groups over VARCHAR(100) utf8mb4, rheap_max_memory = {}\n",
        args.sessions,
        args.rows,
        mib(budget)
    );
    println!(
        "One session alone, no budget: its internal table took {} of rheap's blocks (Rheap_memory_used_peak).\n",
        mib(table)
    );
    println!("| round | succeeded | same as stock | sessions with a table on disk | budget refusals | Rheap_memory_used_peak | budget + 1 block a session | ≤ | mariadbd RSS before | peak RSS − RSS before | ≤ 1.1 × budget |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let mut ok = true;
    for label in ["cold", "warm"] {
        eprintln!("budget: {} sessions at once ({label})", args.sessions);
        ok &= round(&server, label, &reference, &args)?;
    }
    println!(
        "\nmariadbd's peak RSS since start-up: {}",
        mib(proc_status(pid, "VmHWM:")?)
    );
    ensure!(ok, "a session failed or its result differs from stock's");
    Ok(())
}
