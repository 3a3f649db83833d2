//! HASH and BTREE keys on strings find the rows MEMORY's find under every collation of the
//! server: twin tables, ENGINE=MEMORY and ENGINE=RHEAP, each with both keys on one VARCHAR,
//! answer the same equality and range lookups, over values that differ in case, accents,
//! trailing spaces, trailing NUL characters and expansions.
//!
//! MEMORY's answers are its BTREE key's, which compares as the collation does
//! (`strnncollsp`). Its HASH key does not always: under latin2_czech_cs it finds two rows equal
//! to 'abc' where its BTREE key finds three (its hash function and its comparison disagree).
//! rheap's HASH key must find what the BTREE keys find.

use anyhow::{ensure, Result};
use mysql::prelude::Queryable;
use mysql::Conn;
use rheap_harness::server::{Options, Server};

mod common;
use common::{collations, C_STRINGS, VALUES};

/// A value's id and its counts (see [`lookups`]).
type Counts = (u32, Option<u64>, Option<u64>, Option<u64>, Option<u64>);

/// For each value (of `c`, filtered by `only`): the rows equal to it through the BTREE key and
/// through key `hash` (the HASH key, or the BTREE key again), and the rows below and above it
/// through the BTREE key, in table `t`.
fn lookups(
    c: &mut Conn,
    t: &str,
    hash: &str,
    only: &str,
    cs: &str,
    collation: &str,
) -> Result<Vec<String>> {
    let x = format!("CONVERT(v.a USING {cs}) COLLATE `{collation}`");
    let count = |key: &str, op: &str| {
        format!("(SELECT COUNT(*) FROM {t} FORCE INDEX ({key}) WHERE {t}.a {op} {x})")
    };
    let rows: Vec<Counts> = c.query(format!(
        "SELECT v.id, {}, {}, {}, {} FROM c AS v {only} ORDER BY v.id",
        count("b", "="),
        count(hash, "="),
        count("b", "<"),
        count("b", ">"),
    ))?;
    Ok(rows.into_iter().map(|r| format!("{r:?}")).collect())
}

/// The algorithm of key `h` or `b`.
fn hash_using(key: &str) -> &'static str {
    match key {
        "h" => "HASH",
        _ => "BTREE",
    }
}

#[test]
fn every_collation_keys_as_memory_does() -> Result<()> {
    let server = Server::start(Options::with_plugin_loaded()?)?;
    let mut c = server.conn()?;
    c.query_drop(
        "CREATE TABLE c (id INT PRIMARY KEY, a VARCHAR(30) CHARACTER SET utf8mb4, nul BOOL) \
         ENGINE=InnoDB",
    )?;
    for (i, v) in VALUES.iter().enumerate() {
        let nul = v.contains("\\0");
        c.query_drop(format!("INSERT INTO c VALUES ({i}, {v}, {nul})"))?;
    }
    let mut differ = Vec::new();
    for (collation, cs) in collations(&mut c)? {
        if cs == "binary" {
            continue;
        }
        let (rows, only) = match collation == C_STRINGS {
            true => ("WHERE NOT nul", "WHERE NOT v.nul"),
            false => ("", ""),
        };
        let mut answers = Vec::new();
        for (t, engine, hash) in [("m", "MEMORY", "b"), ("r", "RHEAP", "h")] {
            c.query_drop(format!("DROP TABLE IF EXISTS {t}"))?;
            c.query_drop(format!(
                "CREATE TABLE {t} (id INT, a VARCHAR(30) CHARACTER SET {cs} COLLATE `{collation}`, \
                 KEY b USING BTREE (a), KEY h USING HASH (a)) ENGINE={engine}"
            ))?;
            c.query_drop(format!(
                "INSERT INTO {t} SELECT id, CONVERT(a USING {cs}) FROM c {rows}"
            ))?;
            let mut a = lookups(&mut c, t, hash, only, &cs, &collation)?;
            // The rows a UNIQUE key keeps of the values in order, through the BTREE key and
            // through the HASH key (MEMORY: the BTREE key again).
            for (k, using) in ["BTREE", hash_using(hash)].into_iter().enumerate() {
                c.query_drop(format!("DROP TABLE IF EXISTS {t}u"))?;
                c.query_drop(format!(
                    "CREATE TABLE {t}u (id INT, a VARCHAR(30) CHARACTER SET {cs} \
                     COLLATE `{collation}`, UNIQUE KEY USING {using} (a)) ENGINE={engine}"
                ))?;
                c.query_drop(format!(
                    "INSERT IGNORE INTO {t}u SELECT id, CONVERT(a USING {cs}) FROM c {rows} \
                     ORDER BY id"
                ))?;
                let kept: Option<String> =
                    c.query_first(format!("SELECT GROUP_CONCAT(id ORDER BY id) FROM {t}u"))?;
                a.push(format!("unique key {k} kept {}", kept.unwrap_or_default()));
            }
            answers.push(a);
        }
        let n: Option<u64> = c.query_first("SELECT COUNT(*) FROM r")?;
        ensure!(
            n.unwrap_or(0) > 10,
            "{collation}: {n:?} rows in the RHEAP table"
        );
        if answers[0] != answers[1] {
            let first = answers[0]
                .iter()
                .zip(&answers[1])
                .find(|(m, r)| m != r)
                .map(|(m, r)| format!("MEMORY {m} RHEAP {r}"));
            differ.push(format!("{collation}: {}", first.unwrap_or_default()));
        }
    }
    ensure!(differ.is_empty(), "lookups differ:\n{}", differ.join("\n"));
    Ok(())
}
