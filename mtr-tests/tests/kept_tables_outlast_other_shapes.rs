//! A statement that comes back after a few hundred statements of other shapes still finds the
//! internal temporary table it kept: a CPU's part of the pool keeps 256 tables
//! (core/src/recycle/mod.rs, `PER_CPU`), room for the shapes a mix of statements cycles through.
//! With the thread bound to one CPU, every table goes to that CPU's part, so what the part
//! keeps is all that counts.

use mysql::prelude::Queryable;
use rheap_harness::pinned::{allowed_cpus, Pinned};

/// Statements of other shapes between the first statement and its return: fewer than a part
/// keeps, and more than a quarter of it.
const OTHERS: usize = 200;

#[test]
fn a_kept_table_outlasts_two_hundred_other_shapes() -> anyhow::Result<()> {
    let cpu = allowed_cpus()?[0];
    let mut p = Pinned::start()?;
    p.conn
        .query_drop("CREATE TABLE t1 (a INT, b VARCHAR(20)) ENGINE=MyISAM")?;
    p.conn
        .query_drop("INSERT INTO t1 VALUES (1, 'x'), (2, 'y'), (3, 'x'), (4, 'z'), (5, 'y')")?;
    let first = vec!["SELECT b, COUNT(*) FROM t1 GROUP BY b".to_string()];
    // Each groups on a string of another length: a key and a row of another size, so a
    // definition no other one matches (and with a SUM, none the first statement's).
    let others: Vec<String> = (1..=OTHERS)
        .map(|n| format!("SELECT CAST(b AS CHAR({n})) AS x, COUNT(*), SUM(a) FROM t1 GROUP BY x"))
        .collect();

    assert_eq!(p.run_on(cpu, &first)?.0, 1, "the first statement's table");
    assert_eq!(
        p.run_on(cpu, &others)?,
        (OTHERS as u64, 0),
        "{OTHERS} statements of {OTHERS} shapes: each table built, none served by a kept one"
    );
    assert_eq!(
        p.run_on(cpu, &first)?,
        (1, 1),
        "after {OTHERS} other shapes, the first statement's kept table serves it again"
    );
    Ok(())
}
