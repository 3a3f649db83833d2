//! INSTALL SONAME and UNINSTALL SONAME on the installed server, and the engine as the server
//! lists it.

use mysql::prelude::Queryable;
use rheap_harness::server::{Options, Server};
use rheap_harness::sql::{query_text, rheap_available};

#[test]
fn install_then_uninstall_keeps_the_server_running() -> anyhow::Result<()> {
    let server = Server::start(Options::with_plugin_dir()?)?;
    let mut c = server.conn()?;
    c.query_drop("INSTALL SONAME 'ha_rheap'")?;
    insta::assert_snapshot!(
        query_text(&mut c, "SELECT ENGINE, SUPPORT, TRANSACTIONS, XA, SAVEPOINTS FROM information_schema.ENGINES WHERE ENGINE = 'RHEAP'")?,
        @r"
    ENGINE	SUPPORT	TRANSACTIONS	XA	SAVEPOINTS
    RHEAP	YES	NO	NO	NO
    "
    );
    insta::assert_snapshot!(
        query_text(&mut c, "SELECT PLUGIN_NAME, PLUGIN_STATUS, PLUGIN_TYPE, PLUGIN_LIBRARY, PLUGIN_MATURITY FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'RHEAP'")?,
        @r"
    PLUGIN_NAME	PLUGIN_STATUS	PLUGIN_TYPE	PLUGIN_LIBRARY	PLUGIN_MATURITY
    RHEAP	ACTIVE	STORAGE ENGINE	ha_rheap.so	Gamma
    "
    );
    // A table that existed and was dropped leaves nothing open.
    c.query_drop("CREATE TABLE t (a INT) ENGINE=RHEAP")?;
    c.query_drop("INSERT INTO t VALUES (1)")?;
    c.query_drop("DROP TABLE t")?;
    c.query_drop("FLUSH TABLES")?;
    c.query_drop("UNINSTALL SONAME 'ha_rheap'")?;
    assert!(!rheap_available(&mut c)?);
    assert_eq!(query_text(&mut c, "SELECT 1 + 1")?, "1 + 1\n2\n");
    assert!(server.is_running());
    // And it can come back.
    c.query_drop("INSTALL SONAME 'ha_rheap'")?;
    c.query_drop("CREATE TABLE t2 (a INT) ENGINE=RHEAP")?;
    c.query_drop("DROP TABLE t2")?;
    assert!(
        !server.error_log().contains("[ERROR]"),
        "error log:\n{}",
        server.error_log()
    );
    Ok(())
}

/// A MEMORY table HEAP holds stays HEAP's through UNINSTALL, INSTALL and a TRUNCATE under
/// `rheap_takeover=ALL` (which re-creates the table by its name): the plugin forgets at
/// UNINSTALL which tables it left to HEAP, and learns it again when the table is opened.
#[test]
fn a_table_left_to_heap_stays_heaps_after_the_plugin_comes_back() -> anyhow::Result<()> {
    let server = Server::start(Options::with_plugin_dir()?)?;
    let mut c = server.conn()?;
    c.query_drop("INSTALL SONAME 'ha_rheap'")?;
    c.query_drop("SET GLOBAL rheap_takeover = INTERNAL")?;
    c.query_drop("CREATE TABLE m (a INT) ENGINE=MEMORY")?;
    c.query_drop("INSERT INTO m VALUES (1), (2)")?;
    c.query_drop("FLUSH TABLES")?;
    c.query_drop("UNINSTALL SONAME 'ha_rheap'")?;
    c.query_drop("INSTALL SONAME 'ha_rheap'")?;
    c.query_drop("SET GLOBAL rheap_takeover = ALL")?;
    assert_eq!(
        query_text(&mut c, "SELECT COUNT(*) FROM m")?,
        "COUNT(*)\n2\n"
    );
    c.query_drop("TRUNCATE TABLE m")?;
    c.query_drop("INSERT INTO m VALUES (3)")?;
    c.query_drop("FLUSH TABLES")?;
    assert_eq!(query_text(&mut c, "SELECT a FROM m")?, "a\n3\n");
    assert_eq!(
        query_text(
            &mut c,
            "SELECT COUNT(*) FROM information_schema.RHEAP_TABLES WHERE TABLE_NAME = 'm'"
        )?,
        "COUNT(*)\n0\n",
        "rheap holds m"
    );
    c.query_drop("DROP TABLE m")?;
    c.query_drop("SET GLOBAL rheap_takeover = DEFAULT")?;
    Ok(())
}
