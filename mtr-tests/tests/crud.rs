//! The basic life of an ENGINE=RHEAP table through SQL: create, insert, scan, update, delete,
//! truncate, drop; limits and refusals as MEMORY gives them.

use mysql::prelude::Queryable;
use rheap_harness::server::Server;
use rheap_harness::sql::transcript;

#[test]
fn create_insert_select_update_delete_truncate_drop() -> anyhow::Result<()> {
    let server = Server::with_rheap()?;
    let mut c = server.conn()?;
    insta::assert_snapshot!(transcript(&mut c, &[
        "CREATE TABLE t (id INT NOT NULL, name VARCHAR(20), price DECIMAL(8,2), d DATE, f DOUBLE) ENGINE=RHEAP",
        "INSERT INTO t VALUES (1, 'one', 1.50, '2024-01-01', 0.5), (2, 'two', NULL, NULL, -1e10), (3, 'three', 3.00, '2024-03-03', NULL)",
        "SELECT * FROM t",
        "UPDATE t SET name = 'TWO', price = 2.25 WHERE id = 2",
        "SELECT * FROM t WHERE id >= 2",
        "DELETE FROM t WHERE id = 1",
        "SELECT COUNT(*), SUM(price) FROM t",
        // The freed slot is reused first: the new row comes first in a scan, as in MEMORY.
        "INSERT INTO t VALUES (4, 'four', 4.00, '2024-04-04', 4)",
        "SELECT id, name FROM t",
        "SELECT ENGINE, ROW_FORMAT, TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_NAME = 't'",
        "DELETE FROM t",
        "SELECT COUNT(*) FROM t",
        "INSERT INTO t (id) VALUES (5), (6)",
        "TRUNCATE TABLE t",
        "SELECT COUNT(*) FROM t",
        "INSERT INTO t (id) VALUES (7)",
        "SELECT id FROM t",
        "DROP TABLE t",
        "SELECT * FROM t",
    ]));
    Ok(())
}

/// The same statements on ENGINE=MEMORY and ENGINE=RHEAP give the same transcript, with
/// `rheap_table_size_limit=HEAP` (tables fill at MEMORY's row).
#[test]
fn same_transcript_as_memory() -> anyhow::Result<()> {
    let server = Server::with_rheap()?;
    let mut c = server.conn()?;
    c.query_drop("SET GLOBAL rheap_table_size_limit = HEAP")?;
    let script = |engine: &str| -> Vec<String> {
        [
            "CREATE TABLE m (a INT, b VARCHAR(10)) ENGINE=ENGINE MAX_ROWS=3",
            "INSERT INTO m VALUES (1, 'a'), (2, 'b'), (3, 'c')",
            "INSERT INTO m VALUES (4, 'd')",
            "INSERT INTO m VALUES (5, 'e')",
            "DELETE FROM m WHERE a IN (2, 4)",
            "INSERT INTO m VALUES (6, 'f'), (7, 'g')",
            "UPDATE m SET b = 'x' WHERE a > 5",
            "SELECT * FROM m",
            "SELECT TABLE_ROWS, AVG_ROW_LENGTH, ROW_FORMAT FROM information_schema.TABLES WHERE TABLE_NAME = 'm'",
            "DELETE FROM m",
            "INSERT INTO m VALUES (8, 'h')",
            "SELECT * FROM m",
            "DROP TABLE m",
            // The row at which a table fills, with the smallest max_heap_table_size.
            "SET SESSION max_heap_table_size = 16384",
            "CREATE TABLE f (a INT, b CHAR(200)) ENGINE=ENGINE",
            "INSERT INTO f WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 1000) SELECT n, 'x' FROM s",
            "SELECT COUNT(*), MAX(a) FROM f",
            "DELETE FROM f WHERE a <= 10",
            "INSERT INTO f VALUES (1001, 'y'), (1002, 'z')",
            "SELECT COUNT(*), MAX(a) FROM f",
            "SELECT MAX_DATA_LENGTH, DATA_FREE, AVG_ROW_LENGTH FROM information_schema.TABLES WHERE TABLE_NAME = 'f'",
            "DROP TABLE f",
            "SET SESSION max_heap_table_size = DEFAULT",
        ]
        .iter()
        .map(|s| s.replace("ENGINE=ENGINE", &format!("ENGINE={engine}")))
        .collect()
    };
    let run = |c: &mut mysql::Conn, engine: &str| {
        let stmts = script(engine);
        transcript(c, &stmts.iter().map(String::as_str).collect::<Vec<_>>())
            .replace(engine, "<engine>")
    };
    let memory = run(&mut c, "MEMORY");
    let rheap = run(&mut c, "RHEAP");
    assert_eq!(rheap, memory);
    insta::assert_snapshot!(rheap);
    Ok(())
}

#[test]
fn refusals_match_memory() -> anyhow::Result<()> {
    let server = Server::with_rheap()?;
    let mut c = server.conn()?;
    insta::assert_snapshot!(transcript(
        &mut c,
        &[
            "CREATE TABLE f (a VARCHAR(10), FULLTEXT (a)) ENGINE=RHEAP",
            "CREATE TABLE f (a VARCHAR(10), FULLTEXT (a)) ENGINE=MEMORY",
            "CREATE TABLE b (a BLOB) ENGINE=MEMORY",
            "DROP TABLE IF EXISTS no_such_table",
            "SHOW WARNINGS",
            "DROP TABLE no_such_table",
        ]
    ));
    Ok(())
}

#[test]
fn tables_are_shared_between_connections() -> anyhow::Result<()> {
    let server = Server::with_rheap()?;
    let (mut a, mut b) = (server.conn()?, server.conn()?);
    insta::assert_snapshot!(
        transcript(
            &mut a,
            &[
                "CREATE TABLE s (a INT, b CHAR(3)) ENGINE=RHEAP",
                "INSERT INTO s VALUES (1, 'a'), (2, 'b')",
            ]
        ) + &transcript(
            &mut b,
            &[
                "SELECT * FROM s",
                "INSERT INTO s VALUES (3, 'c')",
                "RENAME TABLE s TO s2",
            ]
        ) + &transcript(
            &mut a,
            &["SELECT * FROM s2", "SELECT * FROM s", "DROP TABLE s2"]
        )
    );
    Ok(())
}
