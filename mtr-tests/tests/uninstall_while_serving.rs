//! UNINSTALL SONAME while rheap serves MEMORY's tables never crashes the server.
//!
//! - Internal temporary tables in flight (a statement running in another connection) finish
//!   on rheap's code, which stays mapped; new ones go to HEAP again at once.
//! - ENGINE=MEMORY tables rheap holds (rheap_takeover=ALL) keep the plugin: UNINSTALL is
//!   deferred with the server's "plugin is busy" warning until the last of them is dropped.

use mysql::prelude::Queryable;
use rheap_harness::server::{Options, Server};
use rheap_harness::sql::{query_text, rheap_available};

/// A statement that builds internal temporary tables for a while.
const LONG_GROUP_BY: &str = "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s \
    WHERE n < 200000) SELECT n % 1000 AS k, COUNT(*) FROM s GROUP BY k ORDER BY k DESC LIMIT 1";

fn status(c: &mut mysql::Conn, name: &str) -> anyhow::Result<Option<u64>> {
    Ok(c.query_first(format!(
        "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = '{name}'"
    ))?)
}

#[test]
fn uninstall_while_tables_are_served() -> anyhow::Result<()> {
    let server = Server::start(Options::with_plugin_dir()?)?;
    let mut c = server.conn()?;
    c.query_drop("SET SESSION max_recursive_iterations = 1000000")?;
    c.query_drop("INSTALL SONAME 'ha_rheap'")?;
    c.query_drop("SET GLOBAL rheap_takeover = ALL")?;
    c.query_drop("CREATE TABLE m (a INT, KEY (a)) ENGINE=MEMORY")?;
    c.query_drop("INSERT INTO m VALUES (1), (2), (3)")?;

    // A statement with internal temporary tables runs in another connection meanwhile.
    let mut other = server.conn()?;
    let running = std::thread::spawn(move || -> anyhow::Result<String> {
        other.query_drop("SET SESSION max_recursive_iterations = 1000000")?;
        let mut out = String::new();
        for _ in 0..5 {
            out = query_text(&mut other, LONG_GROUP_BY)?;
        }
        Ok(out)
    });

    // rheap holds m: UNINSTALL is deferred, m keeps its rows, RHEAP goes on serving.
    c.query_drop("UNINSTALL SONAME 'ha_rheap'")?;
    let warnings = query_text(&mut c, "SHOW WARNINGS")?;
    assert!(
        warnings.contains("busy"),
        "expected a busy warning, got:\n{warnings}"
    );
    assert_eq!(
        query_text(&mut c, "SELECT COUNT(*) FROM m")?,
        "COUNT(*)\n3\n"
    );
    c.query_drop("FLUSH TABLES")?;
    assert_eq!(query_text(&mut c, "SELECT a FROM m WHERE a = 2")?, "a\n2\n");

    // Dropping the last table rheap holds lets the uninstall happen.
    c.query_drop("DROP TABLE m")?;
    let in_flight = running.join().expect("the other connection's thread")?;
    assert_eq!(in_flight, "k\tCOUNT(*)\n999\t200\n");
    assert!(!rheap_available(&mut c)?);
    assert_eq!(status(&mut c, "RHEAP_TABLES_LIVE")?, None);
    // MEMORY is stock again.
    c.query_drop("CREATE TABLE m2 (a INT) ENGINE=MEMORY")?;
    c.query_drop("INSERT INTO m2 VALUES (7)")?;
    assert_eq!(
        query_text(&mut c, "SELECT a, COUNT(*) FROM m2 GROUP BY a")?,
        "a\tCOUNT(*)\n7\t1\n"
    );
    c.query_drop("DROP TABLE m2")?;

    // It comes back, and counts from where the library left off being used.
    c.query_drop("INSTALL SONAME 'ha_rheap'")?;
    c.query_drop("SET GLOBAL rheap_takeover = OFF")?;
    assert_eq!(status(&mut c, "RHEAP_TABLES_LIVE")?, Some(0));
    assert!(server.is_running());
    assert!(
        !server.error_log().contains("[ERROR]"),
        "error log:\n{}",
        server.error_log()
    );
    Ok(())
}
