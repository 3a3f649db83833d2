//! GROUP BY, DISTINCT and UNION group strings under every collation of the server exactly as
//! the server's on-disk engine does: the internal tables rheap serves find the same groups as
//! Aria's (`big_tables`), over values that differ in case, accents, trailing spaces, trailing
//! NUL characters and expansions ('ß' and 'ss'), PAD SPACE and NO PAD collations alike.

use anyhow::{ensure, Result};
use mysql::prelude::Queryable;
use mysql::Conn;
use rheap_harness::server::{Options, Server};
use rheap_harness::sql::{global_status, session_status};

mod common;
use common::{collations, C_STRINGS, VALUES};

/// The groups, distinct rows and union rows of column `a` under `collation` (charset `cs`),
/// with this session's settings.
fn groups(c: &mut Conn, cs: &str, collation: &str) -> Result<String> {
    let a = |tail: &str| format!("CONVERT(CONCAT(a, '{tail}') USING {cs}) COLLATE `{collation}`");
    let rows = match collation == C_STRINGS {
        true => "c WHERE NOT nul",
        false => "c",
    };
    let queries = [
        format!(
            "SELECT COUNT(*), GROUP_CONCAT(n ORDER BY n) FROM \
             (SELECT COUNT(*) n FROM {rows} GROUP BY {}) d",
            a("")
        ),
        format!(
            "SELECT COUNT(*) FROM (SELECT DISTINCT {}, b FROM {rows}) d",
            a("")
        ),
        format!(
            "SELECT COUNT(*) FROM (SELECT {} x FROM {rows} UNION SELECT {} FROM {rows}) d",
            a(""),
            a(" ")
        ),
        format!(
            "SELECT COUNT(*) FROM (SELECT DISTINCT b, {}, {} FROM {rows}) d",
            a(""),
            a("  ")
        ),
    ];
    let mut out = String::new();
    for q in queries {
        let rows: Vec<mysql::Row> = c.query(q)?;
        for r in rows {
            for i in 0..r.len() {
                let v = r.as_ref(i).cloned().unwrap_or(mysql::Value::NULL);
                out.push_str(&rheap_harness::sql::value_text(&v));
                out.push(' ');
            }
        }
        out.push('|');
    }
    Ok(out)
}

#[test]
fn every_collation_groups_as_aria_does() -> Result<()> {
    let mut opts = Options::with_plugin_loaded()?;
    opts.args.push("--rheap-takeover=INTERNAL".into());
    let server = Server::start(opts)?;
    let mut c = server.conn()?;
    c.query_drop(
        "CREATE TABLE c (a VARCHAR(300) CHARACTER SET utf8mb4, b INT, nul BOOL) ENGINE=InnoDB",
    )?;
    for (i, v) in VALUES.iter().enumerate() {
        let nul = v.contains("\\0");
        c.query_drop(format!("INSERT INTO c VALUES ({v}, {}, {nul})", i % 3))?;
    }
    let collations = collations(&mut c)?;
    let served = global_status(&mut c, "Rheap_internal_tables_created")?;
    let mut differ = Vec::new();
    for (collation, cs) in &collations {
        c.query_drop("SET SESSION big_tables = 0")?;
        c.query_drop("FLUSH STATUS")?;
        let rheap = groups(&mut c, cs, collation)?;
        let on_disk = session_status(&mut c, "Created_tmp_disk_tables")?;
        ensure!(
            on_disk == 0,
            "{collation}: {on_disk} tables went to disk under rheap"
        );
        c.query_drop("SET SESSION big_tables = 1")?;
        c.query_drop("FLUSH STATUS")?;
        let aria = groups(&mut c, cs, collation)?;
        let on_disk = session_status(&mut c, "Created_tmp_disk_tables")?;
        ensure!(
            on_disk >= 4,
            "{collation}: {on_disk} tables on disk with big_tables"
        );
        if rheap != aria {
            differ.push(format!("{collation}: rheap {rheap} Aria {aria}"));
        }
    }
    let served = global_status(&mut c, "Rheap_internal_tables_created")? - served;
    ensure!(
        served >= 4 * collations.len() as u64,
        "rheap served {served} internal tables for {} collations",
        collations.len()
    );
    ensure!(differ.is_empty(), "groups differ:\n{}", differ.join("\n"));
    Ok(())
}
