//! UNINSTALL SONAME while information_schema tables are served in rheap (SHOW FULL COLUMNS in
//! another connection): the statements in flight finish, Aria gets its own tables back at once,
//! and INSTALL SONAME takes them again; the plugin also loads before or after another dynamic
//! engine at start-up (its init waits for Aria to be ready).

use mysql::prelude::Queryable;
use rheap_harness::server::{Options, Server};
use rheap_harness::sql::{global_status, query_text, rheap_available, session_status};

fn served(c: &mut mysql::Conn) -> anyhow::Result<u64> {
    global_status(c, "Rheap_information_schema_tables")
}

#[test]
fn uninstall_and_install_while_show_full_columns_runs() -> anyhow::Result<()> {
    let server = Server::start(Options::with_plugin_dir()?)?;
    let mut c = server.conn()?;
    c.query_drop("CREATE TABLE test.t (a INT COMMENT 'a', b TEXT DEFAULT 'x', c LONGBLOB)")?;
    let expected = query_text(&mut c, "SHOW FULL COLUMNS FROM test.t")?;
    c.query_drop("INSTALL SONAME 'ha_rheap'")?;
    assert_eq!(
        query_text(&mut c, "SHOW FULL COLUMNS FROM test.t")?,
        expected
    );
    assert_eq!(served(&mut c)?, 1);

    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let mut other = server.conn()?;
            let (stop, expected) = (stop.clone(), expected.clone());
            Ok(std::thread::spawn(move || -> anyhow::Result<u64> {
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    assert_eq!(
                        query_text(&mut other, "SHOW FULL COLUMNS FROM test.t")?,
                        expected
                    );
                    n += 1;
                }
                Ok(n)
            }))
        })
        .collect::<anyhow::Result<_>>()?;
    for _ in 0..5 {
        c.query_drop("UNINSTALL SONAME 'ha_rheap'")?;
        assert!(!rheap_available(&mut c)?);
        // Aria has its own factory back: the table is on disk again.
        let disk = session_status(&mut c, "Created_tmp_disk_tables")?;
        assert_eq!(
            query_text(&mut c, "SHOW FULL COLUMNS FROM test.t")?,
            expected
        );
        assert_eq!(session_status(&mut c, "Created_tmp_disk_tables")?, disk + 1);
        c.query_drop("INSTALL SONAME 'ha_rheap'")?;
        let disk = session_status(&mut c, "Created_tmp_disk_tables")?;
        assert_eq!(
            query_text(&mut c, "SHOW FULL COLUMNS FROM test.t")?,
            expected
        );
        assert_eq!(session_status(&mut c, "Created_tmp_disk_tables")?, disk);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for w in workers {
        let n = w.join().expect("a worker thread")?;
        assert!(n > 0);
    }
    assert!(served(&mut c)? > 0);
    assert!(server.is_running());
    let log = server.error_log();
    assert!(!log.contains("[ERROR]"), "error log:\n{log}");
    Ok(())
}

#[test]
fn loads_before_and_after_another_engine() -> anyhow::Result<()> {
    for load in [
        "--plugin-load-add=ha_rheap.so;ha_blackhole.so",
        "--plugin-load-add=ha_blackhole.so;ha_rheap.so",
    ] {
        let mut opts = Options::with_plugin_dir()?;
        opts.args.push(load.into());
        let server = Server::start(opts)?;
        let mut c = server.conn()?;
        assert!(rheap_available(&mut c)?, "{load}");
        c.query_drop("CREATE TABLE test.t (a INT, b TEXT) ENGINE=BLACKHOLE")?;
        query_text(&mut c, "SHOW FULL COLUMNS FROM test.t")?;
        assert_eq!(served(&mut c)?, 1, "{load}");
        let log = server.error_log();
        assert!(!log.contains("[ERROR]"), "{load}: error log:\n{log}");
    }
    Ok(())
}
