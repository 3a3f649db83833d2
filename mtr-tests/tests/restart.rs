//! After a server restart an RHEAP table exists and is empty, as a MEMORY table is; the
//! installed plugin loads again from mysql.plugin.

use rheap_harness::server::Server;
use rheap_harness::sql::transcript;

#[test]
fn tables_survive_a_restart_empty() -> anyhow::Result<()> {
    let mut server = Server::with_rheap()?;
    let before = transcript(
        &mut server.conn()?,
        &[
            "CREATE TABLE r (a INT) ENGINE=RHEAP",
            "INSERT INTO r VALUES (1), (2)",
            "SELECT COUNT(*) FROM r",
        ],
    );
    server.restart()?;
    let after = transcript(
        &mut server.conn()?,
        &[
            "SELECT COUNT(*) FROM r",
            "INSERT INTO r VALUES (3)",
            "SELECT a FROM r",
            "DROP TABLE r",
        ],
    );
    insta::assert_snapshot!(before + "-- restart --\n" + &after);
    Ok(())
}
