//! The server-wide budget, measured: `rheap_max_memory` against many sessions whose internal
//! temporary tables together want far more than it allows.
//!
//! ```text
//! cargo run --release -p rheap-bench --bin budget [-- --sessions 16 --budget-mib 256 --rows N]
//! ```
//!
//! Each of `--sessions` sessions runs the same GROUP BY over a VARCHAR(100) utf8mb4 column,
//! whose internal table alone takes about 64 MiB of rheap's blocks at `--rows` source rows,
//! all at once, on three servers, each fresh:
//! - rheap with `rheap_max_memory` = the budget, the sessions' `tmp_table_size` at 1G, so that
//!   only the budget moves a table to disk;
//! - rheap with a budget of 1 MiB: every table goes to disk, and what the server grows by is
//!   its own memory for these sessions (Aria's page cache, the conversion's sort buffers, the
//!   results);
//! - stock HEAP with `tmp_table_size` = the budget / sessions: the same total, as per-table caps.
//!
//! Each runs two rounds: cold (the server's own pools, such as Aria's page cache and the C
//! library's arenas, are still empty) and warm (they hold what the first round touched).
//! Every session's result is compared with stock HEAP's, one session alone and all in memory.
//!
//! Prints a markdown table per round: the sessions that succeeded with stock's result, the
//! sessions whose table went to disk, `Rheap_memory_used_peak` (the highest since the server
//! started) against the budget plus one 4 MiB block per session, and mariadbd's peak resident
//! set over the round (`VmHWM`, reset before it through `/proc/PID/clear_refs`) minus its
//! resident set before, against 1.1 times the budget; then rheap's share of that growth (the
//! budgeted server's minus the all-on-disk one's). Exits non-zero when a session fails or its
//! result differs.

use anyhow::{bail, ensure, Context, Result};
use clap::Parser;
use mysql::prelude::Queryable;
use mysql::Conn;
use rheap_bench::system;
use rheap_harness::server::{Options, Server};
use rheap_harness::sql::{global_status, session_status};

const MIB: u64 = 1 << 20;
/// The largest block rheap takes.
const BLOCK: u64 = rheap_core::alloc::policy::MAX_BLOCK as u64;

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
    /// More mariadbd options for every server (e.g. --server-arg=--aria-sort-buffer-size=4M).
    #[arg(long)]
    server_arg: Vec<String>,
}

const QUERY: &str = "SELECT s, COUNT(*), SUM(id) FROM src GROUP BY s";

type Groups = Vec<(String, u64, u64)>;

/// A session ready for the GROUP BY, at `tmp_table_size = max_heap_table_size = size`.
fn session(server: &Server, size: u64) -> Result<Conn> {
    let mut c = server.conn()?;
    c.query_drop(format!(
        "SET SESSION tmp_table_size = {size}, max_heap_table_size = {size}"
    ))?;
    Ok(c)
}

/// The GROUP BY's groups, sorted, and the tables it put on disk.
fn group_by(c: &mut Conn) -> Result<(Groups, u64)> {
    let disk = session_status(c, "CREATED_TMP_DISK_TABLES")?;
    let mut rows: Groups = c.query(QUERY)?;
    rows.sort_unstable();
    Ok((rows, session_status(c, "CREATED_TMP_DISK_TABLES")? - disk))
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / MIB as f64)
}

/// All sessions at once; prints the round's table row. Returns whether every session
/// succeeded with stock's result, and the growth of the resident set.
fn round(
    server: &Server,
    sys: &System,
    label: &str,
    reference: &Groups,
    args: &Args,
) -> Result<(bool, u64)> {
    let pid = server.pid().context("mariadbd has no pid")?;
    let mut sessions = (0..args.sessions)
        .map(|_| session(server, sys.size))
        .collect::<Result<Vec<_>>>()?;
    let mut c = server.conn()?;
    // Rheap_memory_used_peak is the highest since start-up: the cold round's own, and for the
    // warm round the higher of both rounds'.
    let rss_before =
        system::proc_status(pid, "VmRSS:").context("mariadbd's VmRSS in /proc/PID/status")?;
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5")
        .context("resetting mariadbd's VmHWM (/proc/PID/clear_refs needs root)")?;
    let refusals = global_status(&mut c, "RHEAP_MEMORY_BUDGET_REFUSALS")?;
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
    let rss_peak =
        system::proc_status(pid, "VmHWM:").context("mariadbd's VmHWM in /proc/PID/status")?;
    let peak = global_status(&mut c, "RHEAP_MEMORY_USED_PEAK")?;
    let refused = global_status(&mut c, "RHEAP_MEMORY_BUDGET_REFUSALS")? - refusals;
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
        "| {} | {label} | {}/{} | {}/{} | {disk_sessions} | {refused} | {} | {} | {} | {} | {} | {} |",
        sys.label,
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
    Ok((failed.is_empty() && same == args.sessions, grown))
}

/// One configuration of the server under the same sessions.
struct System {
    label: &'static str,
    /// `rheap_takeover` and `rheap_max_memory`.
    takeover: &'static str,
    budget: u64,
    /// The sessions' tmp_table_size and max_heap_table_size.
    size: u64,
}

/// A fresh server for `sys`, with the source table loaded.
fn start(sys: &System, args: &Args) -> Result<Server> {
    let mut opts = Options::with_plugin_loaded()?;
    opts.args.extend([
        "--max-recursive-iterations=100000000".to_string(),
        format!("--rheap-max-memory={}", sys.budget),
        format!("--rheap-takeover={}", sys.takeover),
    ]);
    opts.args.extend(args.server_arg.iter().cloned());
    let server = Server::start(opts)?;
    let mut c = server.conn()?;
    c.query_drop("CREATE TABLE src (id INT, s VARCHAR(100) CHARACTER SET utf8mb4) ENGINE=MyISAM")?;
    c.query_drop(format!(
        "INSERT INTO src WITH RECURSIVE q(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM q WHERE n < {}) \
         SELECT n, CONCAT('group-', LPAD(n, 10 + n % 20, 'x')) FROM q",
        args.rows
    ))?;
    Ok(server)
}

fn main() -> Result<()> {
    let args = Args::parse();
    let budget = args.budget_mib * MIB;
    let big = 1 << 30;
    let systems = [
        System {
            label: "rheap, rheap_max_memory = budget",
            takeover: "INTERNAL",
            budget,
            size: big,
        },
        System {
            label: "rheap, rheap_max_memory = 1 MiB (every table on disk)",
            takeover: "INTERNAL",
            budget: MIB,
            size: big,
        },
        System {
            label: "stock HEAP, tmp_table_size = budget / sessions",
            takeover: "OFF",
            budget: 0,
            size: budget / args.sessions as u64,
        },
    ];

    eprintln!("budget: the reference, one session on stock HEAP");
    let server = start(&systems[2], &args)?;
    let (reference, disk) = group_by(&mut session(&server, big)?)?;
    ensure!(
        reference.len() as u64 == args.rows,
        "{} groups",
        reference.len()
    );
    ensure!(disk == 0, "stock's table went to disk");
    drop(server);

    println!(
        "## {} sessions at once, each a GROUP BY of {} groups over VARCHAR(100) utf8mb4; budget {}\n",
        args.sessions,
        args.rows,
        mib(budget)
    );
    println!("| server | round | succeeded | same as stock | sessions with a table on disk | budget refusals | Rheap_memory_used_peak | budget + 1 block a session | ≤ | mariadbd RSS before | peak RSS − RSS before | ≤ 1.1 × budget |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let mut ok = true;
    let mut grown = Vec::new();
    for sys in &systems {
        let server = start(sys, &args)?;
        for label in ["cold", "warm"] {
            eprintln!(
                "budget: {}: {} sessions at once ({label})",
                sys.label, args.sessions
            );
            let (round_ok, g) = round(&server, sys, label, &reference, &args)?;
            ok &= round_ok;
            grown.push(g);
        }
    }
    println!("\nrheap's share of the growth: the budgeted server's minus the growth of the one that put every table on disk (the server's own memory for the same sessions: Aria, sorting, results).\n");
    println!("| round | rheap's share | ≤ 1.1 × budget |");
    println!("| --- | --- | --- |");
    for (i, label) in ["cold", "warm"].iter().enumerate() {
        let share = grown[i].saturating_sub(grown[2 + i]);
        println!(
            "| {label} | {} | {} |",
            mib(share),
            if share <= budget + budget / 10 {
                "yes"
            } else {
                "**no**"
            }
        );
    }

    eprintln!("budget: one session on rheap, no budget");
    let server = start(&systems[0], &args)?;
    let mut c = server.conn()?;
    c.query_drop("SET GLOBAL rheap_max_memory = 0")?;
    let (alone, disk) = group_by(&mut session(&server, big)?)?;
    ensure!(alone == reference, "rheap's result differs from stock's");
    ensure!(disk == 0, "rheap's table went to disk without a budget");
    let table = global_status(&mut c, "RHEAP_MEMORY_USED_PEAK")?;
    println!(
        "\nOne session alone on rheap, no budget: its internal table took {} of rheap's blocks (Rheap_memory_used_peak).",
        mib(table)
    );
    ensure!(ok, "a session failed or its result differs from stock's");
    Ok(())
}
