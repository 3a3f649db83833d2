//! information_schema.RHEAP_TABLES read while 16 sessions create, fill and drop tables of
//! every kind (named ones in a schema the reader may see and in one it may not, TEMPORARY
//! tables, internal tables of GROUP BY and DISTINCT): the view takes no lock on the tables, so
//! rows come and go under the reader. A reader without privileges on one schema and without
//! PROCESS never sees a row of that schema, nor another connection's TEMPORARY or internal
//! table, nor a kept one; a reader with PROCESS does see other connections' tables; the
//! server survives and logs no error.

use anyhow::{ensure, Result};
use mysql::prelude::Queryable;
use rheap_harness::server::Server;

/// Sessions that create and drop tables.
const WRITERS: usize = 16;
/// Rounds each of them makes.
const ROUNDS: usize = 40;

/// One writer's rounds: a named table in `seen` and one in `hidden`, a TEMPORARY table, and
/// statements with internal tables, then the drops.
fn churn(server: &Server, w: usize) -> Result<()> {
    let mut c = server.conn()?;
    for r in 0..ROUNDS {
        for schema in ["seen", "hidden"] {
            c.query_drop(format!(
                "CREATE TABLE {schema}.t{w}_{r} (a INT, b VARCHAR(300), KEY (a)) ENGINE=RHEAP"
            ))?;
            c.query_drop(format!(
                "INSERT INTO {schema}.t{w}_{r} VALUES (1, 'x'), (2, 'y'), (3, REPEAT('z', 300))"
            ))?;
        }
        c.query_drop(format!("CREATE TEMPORARY TABLE tt{w} (a INT) ENGINE=RHEAP"))?;
        c.query_drop(format!("INSERT INTO tt{w} VALUES ({r})"))?;
        let groups: Vec<(i64, i64)> = c.query(format!(
            "SELECT a, COUNT(*) FROM hidden.t{w}_{r} GROUP BY b, a ORDER BY a"
        ))?;
        ensure!(groups.len() == 3, "{groups:?}");
        let distinct: Vec<String> =
            c.query(format!("SELECT DISTINCT b FROM seen.t{w}_{r} ORDER BY b"))?;
        ensure!(distinct.len() == 3);
        c.query_drop(format!("DROP TEMPORARY TABLE tt{w}"))?;
        for schema in ["seen", "hidden"] {
            c.query_drop(format!("DROP TABLE {schema}.t{w}_{r}"))?;
        }
    }
    Ok(())
}

/// What one read of the view showed a reader.
#[derive(Default, Debug)]
struct Seen {
    reads: u64,
    named_seen: u64,
    others_owned: u64,
    kept: u64,
    hidden: Vec<String>,
}

fn read(c: &mut mysql::Conn, seen: &mut Seen) -> Result<()> {
    let me: u64 = c.query_first("SELECT CONNECTION_ID()")?.unwrap_or(0);
    let rows: Vec<(Option<String>, String, String, Option<u64>)> = c.query(
        "SELECT TABLE_SCHEMA, TABLE_NAME, KIND, CONNECTION_ID FROM information_schema.RHEAP_TABLES",
    )?;
    seen.reads += 1;
    for (schema, name, kind, owner) in rows {
        match (schema.as_deref(), kind.as_str()) {
            (Some("hidden"), _) => seen.hidden.push(format!("hidden.{name}")),
            (Some("seen"), _) => seen.named_seen += 1,
            (_, "KEPT") => seen.kept += 1,
            (_, "TEMPORARY" | "INTERNAL") if owner != Some(me) => seen.others_owned += 1,
            _ => {}
        }
    }
    Ok(())
}

#[test]
fn the_view_under_churn_shows_a_reader_only_what_it_may_see() -> Result<()> {
    let server = Server::with_rheap()?;
    let mut root = server.conn()?;
    for sql in [
        "CREATE DATABASE seen",
        "CREATE DATABASE hidden",
        "CREATE USER reader@localhost IDENTIFIED BY 'r'",
        "GRANT SELECT ON seen.* TO reader@localhost",
        "CREATE USER watcher@localhost IDENTIFIED BY 'w'",
        "GRANT PROCESS ON *.* TO watcher@localhost",
    ] {
        root.query_drop(sql)?;
    }
    let done = std::sync::atomic::AtomicUsize::new(0);
    let (reader, watcher) = std::thread::scope(|s| -> Result<(Seen, Seen)> {
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (server, done) = (&server, &done);
                s.spawn(move || {
                    let r = churn(server, w);
                    done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    r
                })
            })
            .collect();
        let readers = [("reader", "r"), ("watcher", "w")].map(|(user, password)| {
            let (server, done) = (&server, &done);
            s.spawn(move || -> Result<Seen> {
                let mut c = server.conn_as(user, password)?;
                let mut seen = Seen::default();
                // Reads until every writer is done, and at least once after.
                loop {
                    let last = done.load(std::sync::atomic::Ordering::SeqCst) == WRITERS;
                    read(&mut c, &mut seen)?;
                    if last {
                        return Ok(seen);
                    }
                }
            })
        });
        for w in writers {
            w.join().expect("a writer thread")?;
        }
        let [reader, watcher] = readers.map(|r| r.join().expect("a reader thread"));
        Ok((reader?, watcher?))
    })?;
    eprintln!(
        "reader: {} reads, {} rows of `seen`; watcher: {} reads, {} rows of other \
         connections' tables, {} kept",
        reader.reads, reader.named_seen, watcher.reads, watcher.others_owned, watcher.kept
    );
    ensure!(
        reader.hidden.is_empty(),
        "reader saw {} rows of `hidden`, among them {:?}",
        reader.hidden.len(),
        &reader.hidden[..reader.hidden.len().min(5)]
    );
    ensure!(
        reader.others_owned == 0 && reader.kept == 0,
        "reader saw other connections' or kept tables: {reader:?}"
    );
    ensure!(
        reader.named_seen > 0,
        "the reader never saw its schema's tables: {reader:?}"
    );
    ensure!(
        watcher.others_owned > 0,
        "PROCESS saw no other connection's table: {watcher:?}"
    );
    ensure!(
        watcher.hidden.is_empty() && watcher.named_seen == 0,
        "PROCESS alone saw named tables: {} of `hidden`, {} of `seen`",
        watcher.hidden.len(),
        watcher.named_seen
    );
    ensure!(server.is_running());
    let log = server.error_log();
    ensure!(!log.contains("[ERROR]"), "error log:\n{log}");
    Ok(())
}
