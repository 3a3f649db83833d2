//! The information_schema tables with BLOB/TEXT columns that rheap serves (SHOW FULL COLUMNS's
//! COLUMNS above all) never touch the disk: the server creates no Aria file for them, where it
//! creates one or more per statement without rheap, and nothing is left in tmpdir.

use mysql::prelude::Queryable;
use rheap_harness::server::{Options, Server};
use rheap_mtr_tests::created_files::CreatedFiles;

const STATEMENTS: usize = 50;

fn sql_files(names: &[String]) -> usize {
    names.iter().filter(|n| n.starts_with("#sql")).count()
}

#[test]
fn served_information_schema_tables_create_no_file() -> anyhow::Result<()> {
    let server = Server::start(Options::with_plugin_loaded()?)?;
    let mut c = server.conn()?;
    c.query_drop("CREATE TABLE test.t (a INT COMMENT 'a', b TEXT, c JSON, KEY (a))")?;
    let mut created = CreatedFiles::watch(&server.tmp_dir())?;
    let show = |c: &mut mysql::Conn| -> anyhow::Result<()> {
        for _ in 0..STATEMENTS {
            let rows: Vec<mysql::Row> = c.query("SHOW FULL COLUMNS FROM test.t")?;
            assert_eq!(rows.len(), 3);
            let rows: Vec<mysql::Row> = c.query(
                "SELECT COLUMN_NAME, COLUMN_TYPE, COLUMN_DEFAULT FROM information_schema.COLUMNS \
                 WHERE TABLE_SCHEMA = 'test'",
            )?;
            assert_eq!(rows.len(), 3);
        }
        Ok(())
    };

    show(&mut c)?;
    let with_rheap = created.names()?;
    // Without the route, the same statements put Aria's files in tmpdir: the watch sees them.
    c.query_drop("SET GLOBAL rheap_takeover_information_schema = OFF")?;
    show(&mut c)?;
    let with_aria = created.names()?;

    eprintln!(
        "{} statements: #sql files created {} with rheap, {} with Aria",
        2 * STATEMENTS,
        sql_files(&with_rheap),
        sql_files(&with_aria)
    );
    assert_eq!(sql_files(&with_rheap), 0, "files: {with_rheap:?}");
    assert!(
        sql_files(&with_aria) >= 2 * STATEMENTS,
        "files: {with_aria:?}"
    );
    let left: Vec<_> = std::fs::read_dir(server.tmp_dir())?.collect::<Result<_, _>>()?;
    assert!(left.is_empty(), "left in tmpdir: {left:?}");
    Ok(())
}
