//! A connection's thread that moves to another CPU still reuses the internal temporary table
//! it kept on the CPU before: kept tables sit in per-CPU parts, and a part with no match
//! lends from the others (engine/src/pool.rs), as the block cache lends blocks between its
//! shards. The test moves the server's thread itself, with `taskset` on its OS thread id.

use mysql::prelude::Queryable;
use rheap_mtr_tests::server::{Options, Server};

/// A GROUP BY whose internal temporary table (with a key, so fixed rows) rheap keeps.
const GROUP_BY: &str = "SELECT b, COUNT(*) FROM t1 GROUP BY b";

/// The CPUs this process may run on, from /proc/self/status ("0-3,8,10-11").
fn allowed_cpus() -> anyhow::Result<Vec<usize>> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .ok_or_else(|| anyhow::anyhow!("no Cpus_allowed_list in /proc/self/status"))?;
    let mut cpus = Vec::new();
    for range in list.trim().split(',') {
        let (lo, hi) = range.split_once('-').unwrap_or((range, range));
        cpus.extend(lo.parse::<usize>()?..=hi.parse::<usize>()?);
    }
    Ok(cpus)
}

/// Tables served, and those of them served by a kept table (read with the takeover off, so
/// that the reading's own temporary table is HEAP's and moves neither).
fn served_and_reused(c: &mut mysql::Conn) -> anyhow::Result<(u64, u64)> {
    c.query_drop("SET GLOBAL rheap_takeover = OFF")?;
    let read = |c: &mut mysql::Conn, name: &str| -> anyhow::Result<u64> {
        c.query_first::<u64, _>(format!(
            "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS \
             WHERE VARIABLE_NAME = '{name}'"
        ))?
        .ok_or_else(|| anyhow::anyhow!("no status variable {name}"))
    };
    let served = read(c, "RHEAP_TMP_TABLES_CREATED")?;
    let reused = read(c, "RHEAP_TMP_TABLES_REUSED")?;
    c.query_drop("SET GLOBAL rheap_takeover = INTERNAL")?;
    Ok((served, reused))
}

/// Binds OS thread `tid` to `cpu`; its next statement runs there.
fn pin(tid: u64, cpu: usize) -> anyhow::Result<()> {
    duct::cmd!("taskset", "-p", "-c", cpu.to_string(), tid.to_string())
        .stdout_null()
        .run()?;
    Ok(())
}

/// Runs [`GROUP_BY`] `times` with the connection's OS thread `tid` bound to `cpu`; returns the
/// tables served meanwhile, and how many of them a kept table served.
fn group_by_on(
    c: &mut mysql::Conn,
    tid: u64,
    cpu: usize,
    times: usize,
) -> anyhow::Result<(u64, u64)> {
    pin(tid, cpu)?;
    let before = served_and_reused(c)?;
    for _ in 0..times {
        c.query_drop(GROUP_BY)?;
    }
    let after = served_and_reused(c)?;
    Ok((after.0 - before.0, after.1 - before.1))
}

#[test]
fn a_thread_on_another_cpu_reuses_its_kept_table() -> anyhow::Result<()> {
    let cpus = allowed_cpus()?;
    // Parts are chosen by CPU number modulo the CPUs in use (at most 16): two CPUs whose
    // parts differ, when there are two.
    let parts = std::thread::available_parallelism()?.get().min(16);
    let pair = cpus
        .iter()
        .flat_map(|&a| cpus.iter().map(move |&b| (a, b)))
        .find(|&(a, b)| a % parts != b % parts);
    let Some((first, second)) = pair else {
        panic!(
            "this test needs two CPUs with different parts of rheap's pool; \
             allowed: {cpus:?}, in use: {parts}"
        );
    };

    let mut opts = Options::with_plugin_loaded()?;
    opts.args.push("--rheap-takeover=INTERNAL".into());
    opts.args.push("--performance-schema=ON".into());
    let server = Server::start(opts)?;
    let mut c = server.conn()?;
    c.query_drop("CREATE TABLE t1 (a INT, b VARCHAR(20)) ENGINE=MyISAM")?;
    c.query_drop("INSERT INTO t1 VALUES (1, 'x'), (2, 'y'), (3, 'x'), (4, 'z'), (5, 'y')")?;
    let tid: u64 = c
        .query_first(
            "SELECT THREAD_OS_ID FROM performance_schema.threads \
             WHERE PROCESSLIST_ID = CONNECTION_ID()",
        )?
        .ok_or_else(|| anyhow::anyhow!("no OS thread id for this connection"))?;

    // On the first CPU: the table is built, kept, and served again from its part.
    assert_eq!(
        group_by_on(&mut c, tid, first, 3)?,
        (3, 2),
        "on CPU {first}: 3 tables served, the last 2 by the kept one"
    );
    // On the second CPU, whose part keeps nothing of this shape: the kept table serves again.
    assert_eq!(
        group_by_on(&mut c, tid, second, 2)?,
        (2, 2),
        "after moving to CPU {second}: 2 tables served, both by the table kept on CPU {first}"
    );
    Ok(())
}
