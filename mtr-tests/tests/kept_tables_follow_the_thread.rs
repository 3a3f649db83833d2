//! A connection's thread that moves to another CPU still reuses the internal temporary table
//! it kept on the CPU before: kept tables sit in per-CPU parts, and a part with no match
//! lends from the others (core/src/recycle/pool.rs), as the block cache lends blocks between its
//! shards. The test moves the server's thread itself (`rheap_harness::pinned`).

use mysql::prelude::Queryable;
use rheap_harness::pinned::{allowed_cpus, Pinned};

/// A GROUP BY whose internal temporary table (with a key, so fixed rows) rheap keeps.
const GROUP_BY: &str = "SELECT b, COUNT(*) FROM t1 GROUP BY b";

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
    let mut p = Pinned::start()?;
    p.conn
        .query_drop("CREATE TABLE t1 (a INT, b VARCHAR(20)) ENGINE=MyISAM")?;
    p.conn
        .query_drop("INSERT INTO t1 VALUES (1, 'x'), (2, 'y'), (3, 'x'), (4, 'z'), (5, 'y')")?;
    let group_by = |times: usize| vec![GROUP_BY.to_string(); times];
    let Some((first, second)) = pair else {
        // One part only (one CPU): no other CPU to move to. What there is to check is that
        // the one part keeps the table.
        eprintln!(
            "one part of rheap's pool (CPUs allowed: {cpus:?}): the move between CPUs is not \
             checked, only the reuse on CPU {}",
            cpus[0]
        );
        assert_eq!(p.run_on(cpus[0], &group_by(3))?, (3, 2));
        return Ok(());
    };

    // On the first CPU: the table is built, kept, and served again from its part.
    assert_eq!(
        p.run_on(first, &group_by(3))?,
        (3, 2),
        "on CPU {first}: 3 tables served, the last 2 by the kept one"
    );
    // On the second CPU, whose part keeps nothing of this shape: the kept table serves again.
    assert_eq!(
        p.run_on(second, &group_by(2))?,
        (2, 2),
        "after moving to CPU {second}: 2 tables served, both by the table kept on CPU {first}"
    );
    Ok(())
}
