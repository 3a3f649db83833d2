//! Two servers: a stock one and one with rheap serving the internal temporary tables
//! (`rheap_takeover=INTERNAL`) get the same random data and the same random queries that
//! build internal temporary tables (GROUP BY, WITH ROLLUP, DISTINCT, UNION, INTERSECT and
//! EXCEPT, derived tables and views, IN-subqueries, window functions, CTEs), each run at a
//! small `tmp_memory_table_size` (so that tables move to Aria) and at a large one. One case in
//! sixteen has up to 8,000 rows a table over as many groups (the others up to 1,500), so that
//! tables of many blocks are compared too. `s` is a VARCHAR(20) or a VARCHAR(80): in a
//! multi-byte character set the second makes rheap pack the rows of the tables built on it
//! (back to back, `rows/log.rs`). `x` is a TEXT in the same collation (some values alike in
//! their first 1,100 bytes): GROUP BY, DISTINCT, COUNT(DISTINCT), set operations, GROUP_CONCAT
//! in derived tables and window functions over it make the tables the server builds in Aria,
//! which rheap serves in Aria's place (`rheap_takeover_blob_tables`); so do `j` (JSON), `b`
//! (BLOB) and `v` (a VARCHAR(600), past what a key holds in some character sets) in GROUP BY,
//! DISTINCT, COUNT(DISTINCT) and set operations. Results are compared row for row where the
//! query orders its rows totally, as multisets elsewhere.

use super::outcome::Outcome;
use super::report::{case_rng, out_dir, Mismatch, Mode, Progress, Report, SHRINK_BUDGET};
use super::rng::Rng;
use super::shrink;
use anyhow::{Context, Result};
use mysql::prelude::Queryable;
use mysql::Conn;
use rheap_harness::server::{Options, Server};
use rheap_harness::sql::global_status;
use std::time::Duration;

/// The temporary-table sizes each query runs at: small enough that most tables move to Aria,
/// and large enough that none does.
const SIZES: [u64; 2] = [16 * 1024, 64 * 1024 * 1024];

/// PAD SPACE and NO PAD, on one level and on several (utf8mb4_uca1400_as_cs, cp1250_czech_cs).
const COLLATIONS: &[&str] = &[
    "utf8mb4_general_ci",
    "utf8mb4_bin",
    "latin1_swedish_ci",
    "utf8mb4_unicode_ci",
    "utf8mb4_general_nopad_ci",
    "utf8mb4_nopad_bin",
    "utf8mb4_uca1400_ai_ci",
    "utf8mb4_uca1400_as_cs",
    "latin1_german2_ci",
    "cp1250_czech_cs",
];

/// The data of a case: two tables' definitions and rows (each row an SQL tuple).
#[derive(Debug, Clone)]
pub struct Data {
    pub tables: [String; 2],
    pub rows: Vec<(usize, String)>,
    /// Drawn large (see [`Data::draw`]): no query reads a table once per row of the other.
    pub large: bool,
}

/// One query and whether its rows come in a defined order.
#[derive(Debug, Clone)]
pub struct Query {
    pub sql: String,
    pub ordered: bool,
}

impl Data {
    fn draw(r: &mut Rng) -> Data {
        let collation = *r.pick(COLLATIONS);
        // A VARCHAR(80) of a multi-byte character set has room for 256 bytes or more: rheap
        // packs an internal table's rows then, back to back; a VARCHAR(20) is kept as it is.
        let width = *r.pick(&[20, 80]);
        let table = |name: &str| {
            format!(
                "CREATE TABLE {name} (id INT PRIMARY KEY, g INT NOT NULL, h INT, \
                 s VARCHAR({width}) COLLATE {collation}, d DECIMAL(8,2), dt DATE, \
                 x TEXT COLLATE {collation}, j JSON, b BLOB, \
                 v VARCHAR(600) COLLATE {collation}) ENGINE=InnoDB"
            )
        };
        // One case in sixteen is large: up to 8,000 rows a table over as many groups, whose
        // temporary tables pass the small size by far and take several blocks at the large one.
        let large = r.one_in(16);
        let groups = match large {
            true => 8_000,
            false => *r.pick(&[3i64, 20, 300]),
        };
        let mut rows = Vec::new();
        for t in 0..2 {
            let most = match large {
                true => 8_000,
                false => *r.pick(&[30i64, 400, 1500]),
            };
            let n = r.range(0, most);
            for id in 1..=n {
                let g = r.range(0, groups);
                let h = if r.one_in(7) {
                    "NULL".to_string()
                } else {
                    r.range(0, groups / 2 + 1).to_string()
                };
                let s = if r.one_in(9) {
                    "NULL".to_string()
                } else {
                    // Case, accents, expansions, trailing spaces and NUL characters. Under NO
                    // PAD, filesort's keys pad with zero weights, so 'x' and 'x\0' sort as equal
                    // and their order is the engine's row addresses: no NUL there.
                    let pieces = ["a", "A", "b", "é", "e", "x ", "Ab", "zz", "ß", "ss", "\\0"];
                    let pieces = match collation.contains("nopad") {
                        true => &pieces[..pieces.len() - 1],
                        false => &pieces[..],
                    };
                    let s: String = (0..r.range(0, 3)).map(|_| *r.pick(pieces)).collect();
                    // A number after the pieces, or (one in three) the pieces at the end.
                    match r.one_in(3) {
                        true => format!("'{s}'"),
                        false => format!("'{s}{}'", r.below(groups as u64 / 3 + 1)),
                    }
                };
                let d = format!("{}.{}", r.range(-50, 50), r.range(0, 99));
                let dt = format!("'2024-01-{:02}'", r.range(1, 28));
                // A TEXT: the VARCHAR's value repeated, now and then behind 1,100 bytes that
                // all long ones share (past max_sort_length: only the whole value tells them
                // apart), or NULL.
                let x = match r.below(10) {
                    0 => "NULL".to_string(),
                    1 => format!("CONCAT(REPEAT('y', 1100), {s})"),
                    _ => format!("REPEAT({s}, {})", r.range(1, 4)),
                };
                // JSON (text compared as bytes), a BLOB (bytes: case and trailing spaces
                // count) and a long VARCHAR, past what a key of some character sets holds.
                let j = match r.below(6) {
                    0 => "NULL".to_string(),
                    1 => format!("JSON_OBJECT('s', {s})"),
                    _ => format!("JSON_OBJECT('g', {}, 's', {s})", g % 7),
                };
                let b = match r.below(8) {
                    0 => "NULL".to_string(),
                    _ => format!("CAST({s} AS BINARY)"),
                };
                let v = format!(
                    "LEFT(REPEAT(CONCAT({s}, '-'), 80), {})",
                    r.pick(&[100, 600])
                );
                rows.push((
                    t,
                    format!("({id}, {g}, {h}, {s}, {d}, {dt}, {x}, {j}, {b}, {v})"),
                ));
            }
        }
        Data {
            tables: [table("t1"), table("t2")],
            rows,
            large,
        }
    }

    /// Makes the tables (and the views the queries use) anew on `conn`.
    fn load(&self, conn: &mut Conn, rows: &[(usize, String)]) -> Result<()> {
        conn.query_drop("DROP VIEW IF EXISTS v1, v2")?;
        conn.query_drop("DROP TABLE IF EXISTS t1, t2")?;
        for t in &self.tables {
            conn.query_drop(t)?;
        }
        for t in 0..2 {
            let mine: Vec<&str> = rows
                .iter()
                .filter(|(n, _)| *n == t)
                .map(|(_, r)| r.as_str())
                .collect();
            for chunk in mine.chunks(500) {
                conn.query_drop(format!(
                    "INSERT INTO t{} VALUES {}",
                    t + 1,
                    chunk.join(", ")
                ))?;
            }
        }
        conn.query_drop(
            "CREATE ALGORITHM=TEMPTABLE VIEW v1 AS SELECT g, s, COUNT(*) AS c, SUM(d) AS sd \
             FROM t1 GROUP BY g, s",
        )?;
        conn.query_drop("CREATE ALGORITHM=TEMPTABLE VIEW v2 AS SELECT DISTINCT h, dt FROM t2")?;
        Ok(())
    }
}

impl Query {
    /// A query over the tables of [`Data`]; `large`: the data was drawn large.
    fn draw(r: &mut Rng, large: bool) -> Query {
        let col = |r: &mut Rng| *r.pick(&["g", "h", "s", "dt"]);
        let cond = |r: &mut Rng| match r.below(5) {
            0 => format!("g > {}", r.range(0, 10)),
            1 => format!("h IS NOT NULL AND h < {}", r.range(0, 50)),
            2 => format!("s > '{}'", *r.pick(&["a", "B", "e", "x"])),
            3 => format!("d < {}", r.range(-20, 20)),
            _ => "1".into(),
        };
        let unordered = |sql: String| Query {
            sql,
            ordered: false,
        };
        // Correlated subqueries (16) read t2 once per row of t1: not over large tables.
        match r.below(27) {
            16 if large => unordered(
                "SELECT g, COUNT(*), (SELECT MAX(s) FROM t2 WHERE t2.h = 1) FROM t1 GROUP BY g"
                    .into(),
            ),
            0 => {
                let c = col(r);
                let w = cond(r);
                let hint = *r.pick(&["", "SQL_BIG_RESULT ", "SQL_SMALL_RESULT "]);
                unordered(format!(
                    "SELECT {hint}{c}, COUNT(*), SUM(d), MIN(s), MAX(s), MIN(id) FROM t1 WHERE {w} GROUP BY {c}"
                ))
            }
            // MIN(id) orders the groups totally. Under utf8mb4_uca1400_as_cs, the priority
            // queue of `ORDER BY n DESC, s LIMIT` put 'A' and 'a' (each in 4 rows) in one order
            // over HEAP's table and in the other over rheap's, though both tables gave their
            // groups in the same order, and HEAP's order changed from one start of a stock
            // server to the next (seed 20261206, cases 58 and 1201): the two values tie in
            // filesort's key, and the tie is broken by something else than the rows' order.
            1 => {
                let c = col(r);
                Query {
                    sql: format!(
                        "SELECT {c}, COUNT(*) AS n, SUM(g) FROM t1 GROUP BY {c} ORDER BY n DESC, {c}, MIN(id) LIMIT {}",
                        r.range(1, 20)
                    ),
                    ordered: true,
                }
            }
            2 => unordered(format!(
                "SELECT g, h, COUNT(*), SUM(d) FROM t1 WHERE {} GROUP BY g, h WITH ROLLUP",
                cond(r)
            )),
            3 => {
                let (a, b) = (col(r), col(r));
                unordered(format!("SELECT DISTINCT {a}, {b} FROM t1 WHERE {}", cond(r)))
            }
            4 => {
                let (a, b) = (col(r), col(r));
                unordered(format!(
                    "SELECT COUNT(DISTINCT {a}), COUNT(DISTINCT {a}, {b}), COUNT(DISTINCT s) FROM t{}",
                    r.range(1, 2)
                ))
            }
            5 => {
                let op = *r.pick(&[
                    "UNION",
                    "UNION ALL",
                    "INTERSECT",
                    "INTERSECT ALL",
                    "EXCEPT",
                    "EXCEPT ALL",
                ]);
                let c = col(r);
                unordered(format!(
                    "SELECT {c} FROM t1 WHERE {} {op} SELECT {c} FROM t2 WHERE {}",
                    cond(r),
                    cond(r)
                ))
            }
            6 => unordered(format!(
                "SELECT g, s FROM t1 WHERE {} UNION SELECT h, s FROM t2 UNION ALL SELECT g, NULL FROM t2 WHERE {}",
                cond(r),
                cond(r)
            )),
            7 => unordered(format!(
                "SELECT * FROM (SELECT g, COUNT(*) AS c, MAX(s) AS m FROM t1 GROUP BY g) AS d \
                 WHERE c > {} ",
                r.range(0, 3)
            )),
            8 => unordered(format!(
                "SELECT d1.g, d1.c, d2.c FROM (SELECT g, COUNT(*) AS c FROM t1 GROUP BY g) AS d1 \
                 JOIN (SELECT h, COUNT(*) AS c FROM t2 GROUP BY h) AS d2 ON d1.g = d2.h \
                 WHERE d1.c > {}",
                r.range(0, 3)
            )),
            9 => {
                let not = if r.one_in(3) { "NOT " } else { "" };
                unordered(format!(
                    "SELECT id, g, s FROM t1 WHERE g {not}IN (SELECT h FROM t2 WHERE {}) AND {}",
                    cond(r),
                    cond(r)
                ))
            }
            10 => unordered(format!(
                "SELECT id, s FROM t1 WHERE s IN (SELECT s FROM t2 WHERE g < {})",
                r.range(0, 100)
            )),
            11 => unordered(
                "SELECT id, g, ROW_NUMBER() OVER (PARTITION BY g ORDER BY s, id), \
                 SUM(d) OVER (PARTITION BY g), RANK() OVER (ORDER BY s), \
                 COUNT(*) OVER (PARTITION BY h ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) \
                 FROM t1"
                    .into(),
            ),
            12 => unordered(format!(
                "WITH c AS (SELECT g, COUNT(*) AS n FROM t1 GROUP BY g) \
                 SELECT a.g, a.n, b.n FROM c AS a JOIN c AS b ON a.g = b.g + {}",
                r.range(0, 2)
            )),
            13 => {
                let all = if r.one_in(2) { "ALL " } else { "" };
                unordered(format!(
                    "WITH RECURSIVE r(n, x) AS (SELECT 1, 0 UNION {all}SELECT n + 1, (x + n) % {} \
                     FROM r WHERE n < {}) SELECT x, COUNT(*), SUM(n) FROM r GROUP BY x",
                    r.range(2, 9),
                    r.range(1, 300)
                ))
            }
            14 => unordered(format!("SELECT * FROM v1 WHERE c > {}", r.range(0, 2))),
            15 => unordered(
                "SELECT v2.h, v2.dt, COUNT(*) FROM v2 JOIN t1 ON t1.g = v2.h GROUP BY v2.h, v2.dt"
                    .into(),
            ),
            16 => unordered(
                "SELECT id, (SELECT COUNT(*) FROM t2 WHERE t2.g = t1.g) AS c, \
                 (SELECT MAX(s) FROM t2 WHERE t2.h = t1.h) AS m FROM t1"
                    .into(),
            ),
            // The TEXT column: tables the server makes in Aria (a unique constraint over x, or
            // x as payload), which rheap serves in Aria's place.
            18 => unordered(format!(
                "SELECT x, COUNT(*), MIN(id), SUM(d) FROM t{} WHERE {} GROUP BY x",
                r.range(1, 2),
                cond(r)
            )),
            19 => unordered(format!(
                "SELECT DISTINCT x, {} FROM t1 WHERE {}",
                col(r),
                cond(r)
            )),
            20 => unordered(format!(
                "SELECT COUNT(DISTINCT x), COUNT(DISTINCT x, g), COUNT(DISTINCT LOWER(x)) FROM t{}",
                r.range(1, 2)
            )),
            21 => {
                let op = *r.pick(&[
                    "UNION",
                    "UNION ALL",
                    "INTERSECT",
                    "EXCEPT",
                    "INTERSECT ALL",
                    "EXCEPT ALL",
                ]);
                unordered(format!(
                    "SELECT x FROM t1 WHERE {} {op} SELECT x FROM t2 WHERE {}",
                    cond(r),
                    cond(r)
                ))
            }
            // A window function's BLOB result: rows grow as the server updates them, read by
            // position (past the table's limit when they must).
            22 if r.one_in(3) => unordered(
                "SELECT id, MD5(LAG(x) OVER (ORDER BY id)), \
                 LENGTH(FIRST_VALUE(x) OVER (PARTITION BY g ORDER BY id)) FROM t1"
                    .into(),
            ),
            22 if r.one_in(2) => unordered(
                "SELECT g, LENGTH(c), MD5(c) FROM (SELECT g, GROUP_CONCAT(x ORDER BY id) c \
                 FROM t1 GROUP BY g) d"
                    .into(),
            ),
            22 => unordered(
                "SELECT id, x, ROW_NUMBER() OVER (PARTITION BY g ORDER BY id), \
                 COUNT(*) OVER (PARTITION BY h) FROM t1"
                    .into(),
            ),
            // The JSON, BLOB and long VARCHAR columns.
            23 => unordered(format!(
                "SELECT {c}, COUNT(*), MIN(id), SUM(d) FROM t{} WHERE {} GROUP BY {c}",
                r.range(1, 2),
                cond(r),
                c = r.pick(&["j", "b", "v", "v, b"])
            )),
            24 => unordered(format!(
                "SELECT DISTINCT {} FROM t1 WHERE {}",
                r.pick(&["j, b", "v", "b, s", "j, v, g"]),
                cond(r)
            )),
            25 => unordered(format!(
                "SELECT COUNT(DISTINCT j), COUNT(DISTINCT b), COUNT(DISTINCT v), \
                 COUNT(DISTINCT v, b) FROM t{}",
                r.range(1, 2)
            )),
            26 => {
                let op = *r.pick(&["UNION", "INTERSECT", "EXCEPT", "EXCEPT ALL"]);
                let c = *r.pick(&["j", "b", "v"]);
                unordered(format!(
                    "SELECT {c} FROM t1 WHERE {} {op} SELECT {c} FROM t2 WHERE {}",
                    cond(r),
                    cond(r)
                ))
            }
            _ => unordered(
                "SELECT LOWER(s), COUNT(*), GROUP_CONCAT(id ORDER BY id) FROM t1 GROUP BY LOWER(s)"
                    .into(),
            ),
        }
    }
}

/// Both servers' connections.
struct Pair {
    stock: Conn,
    rheap: Conn,
    /// Differences the rheap server also gave with MEMORY's tables (`rheap_takeover=OFF`).
    not_rheaps: u64,
}

impl Pair {
    /// Runs `q` at `size` on both; the difference, if any (stock's outcome first).
    ///
    /// A difference counts only when rheap's tables make it: the rheap server runs `q` again
    /// with `rheap_takeover=OFF`, and if MEMORY's tables give rheap's rows there, the two
    /// servers differ on their own. The server can do that: an `ORDER BY ... LIMIT` over a GROUP
    /// BY (a priority queue) put `'A'` before `'a'` under utf8mb4_uca1400_as_cs on one start of
    /// a stock server and after it on the next (seed 20261206, case 58).
    fn compare(&mut self, q: &Query, size: u64) -> Result<Option<(Outcome, Outcome)>> {
        let set =
            format!("SET SESSION tmp_memory_table_size = {size}, max_heap_table_size = {size}");
        self.stock.query_drop(&set)?;
        self.rheap.query_drop(&set)?;
        let norm = |o: Outcome| if q.ordered { o } else { o.unordered() };
        let a = norm(Outcome::of(&mut self.stock, &q.sql)?);
        let b = norm(Outcome::of(&mut self.rheap, &q.sql)?);
        if a == b {
            return Ok(None);
        }
        self.rheap.query_drop("SET GLOBAL rheap_takeover = OFF")?;
        let memory = Outcome::of(&mut self.rheap, &q.sql);
        self.rheap
            .query_drop("SET GLOBAL rheap_takeover = INTERNAL")?;
        if norm(memory?) == b {
            self.not_rheaps += 1;
            return Ok(None);
        }
        Ok(Some((a, b)))
    }

    fn load(&mut self, data: &Data, rows: &[(usize, String)]) -> Result<()> {
        data.load(&mut self.stock, rows)?;
        data.load(&mut self.rheap, rows)
    }
}

/// Runs the two-server fuzzer for `budget`.
pub fn run(seed: u64, budget: Duration, max_mismatches: usize) -> Result<Report> {
    let stock_server = Server::start(Options::default())?;
    let mut opts = Options::with_plugin_loaded()?;
    opts.args.push("--rheap-takeover=INTERNAL".into());
    let rheap_server = Server::start(opts)?;
    let mut pair = Pair {
        stock: stock_server.conn()?,
        rheap: rheap_server.conn()?,
        not_rheaps: 0,
    };
    for c in [&mut pair.stock, &mut pair.rheap] {
        c.query_drop("CREATE DATABASE IF NOT EXISTS fuzz")?;
        c.query_drop("USE fuzz")?;
        c.query_drop("SET SESSION max_recursive_iterations = 100000")?;
    }
    let mut progress = Progress::new();
    let mut report = Report::new(Mode::Servers, seed);
    'cases: while progress.elapsed() < budget && report.mismatches.len() < max_mismatches {
        let case = report.cases;
        report.cases += 1;
        let mut r = case_rng(seed, case);
        let data = Data::draw(&mut r);
        // A server that stops answering (a crash) fails the run with the end of both error
        // logs: what the server said is gone with its directory afterwards.
        let logs = || {
            let tail = |s: &Server| {
                let log = s.error_log();
                let lines: Vec<&str> = log.lines().collect();
                lines[lines.len().saturating_sub(80)..].join("\n")
            };
            format!(
                "stock server's error log ends:\n{}\nrheap server's error log ends:\n{}",
                tail(&stock_server),
                tail(&rheap_server)
            )
        };
        pair.load(&data, &data.rows)
            .with_context(|| format!("loading servers case {case} of seed {seed}\n{}", logs()))?;
        for _ in 0..30 {
            let q = Query::draw(&mut r, data.large);
            for size in SIZES {
                report.statements += 2;
                let diff = pair.compare(&q, size).with_context(|| {
                    format!(
                        "case {case} of seed {seed} at tmp_memory_table_size={size}: {}\n{}",
                        q.sql,
                        logs()
                    )
                })?;
                if let Some((want, got)) = diff {
                    println!(
                        "[fuzz servers] seed {seed} case {case}: stock and rheap differ at \
                         tmp_memory_table_size={size}: {}",
                        q.sql
                    );
                    let m = shrink_servers(&mut pair, seed, case, &data, &q, size, want, got)?;
                    report.mismatches.push(m);
                    continue 'cases;
                }
            }
            progress.tick(&report);
        }
    }
    report.elapsed = progress.elapsed();
    // The comparison means something only if rheap served the tables, and some of them
    // filled up and moved to Aria.
    let served = global_status(&mut pair.rheap, "Rheap_internal_tables_created")?;
    let moved = global_status(&mut pair.rheap, "Rheap_internal_tables_converted")?;
    println!("[fuzz servers] rheap served {served} internal temporary tables, {moved} of them moved to Aria");
    let aria = global_status(&mut pair.rheap, "Rheap_aria_tables")?;
    let aria_moved = global_status(&mut pair.rheap, "Rheap_aria_tables_moved")?;
    println!(
        "[fuzz servers] rheap served {aria} tables in Aria's place (BLOB columns, unique \
         constraints), {aria_moved} of them moved to Aria"
    );
    println!(
        "[fuzz servers] {} difference(s) the rheap server also gave with rheap_takeover=OFF (not rheap's)",
        pair.not_rheaps
    );
    anyhow::ensure!(
        report.cases == 0 || (served > 0 && moved > 0 && aria > 0 && aria_moved > 0),
        "the rheap server served {served} internal tables and moved {moved} to Aria, and \
         {aria} in Aria's place, {aria_moved} of them moved: the comparison did not reach rheap"
    );
    Ok(report)
}

/// Shrinks the data of a mismatch to the rows it needs and writes an mtr test case of the
/// rheap_takeover suite that runs the query with rheap_takeover OFF and then INTERNAL.
#[allow(clippy::too_many_arguments)]
fn shrink_servers(
    pair: &mut Pair,
    seed: u64,
    case: u64,
    data: &Data,
    q: &Query,
    size: u64,
    want: Outcome,
    got: Outcome,
) -> Result<Mismatch> {
    let rows = shrink::ddmin(data.rows.clone(), SHRINK_BUDGET, |rows| {
        pair.load(data, rows)?;
        Ok(pair.compare(q, size)?.is_some())
    })?;
    pair.load(data, &rows)?;
    let (want, got) = pair.compare(q, size)?.unwrap_or((want, got));
    let mut script = format!(
        "# Found by `cargo xtask fuzz --mode servers --seed {seed}` (case {case}): the query gave\n\
         # other rows with rheap serving the internal temporary tables than on a stock server.\n\
         # Copy into mtr-tests/mysql-test/rheap_takeover/t/ and record it on a build where the\n\
         # two results below (takeover OFF, then INTERNAL) are the same.\n\
         if (!`SELECT COUNT(*) FROM information_schema.ENGINES WHERE ENGINE = 'RHEAP' AND SUPPORT IN ('YES', 'DEFAULT')`)\n\
         {{\n  --skip Needs the RHEAP storage engine (ha_rheap.so)\n}}\n\
         SET SESSION max_recursive_iterations = 100000;\n"
    );
    for t in &data.tables {
        script.push_str(&format!("{t};\n"));
    }
    for (t, row) in &rows {
        script.push_str(&format!("INSERT INTO t{} VALUES {row};\n", t + 1));
    }
    script.push_str(
        "CREATE ALGORITHM=TEMPTABLE VIEW v1 AS SELECT g, s, COUNT(*) AS c, SUM(d) AS sd FROM t1 GROUP BY g, s;\n\
         CREATE ALGORITHM=TEMPTABLE VIEW v2 AS SELECT DISTINCT h, dt FROM t2;\n",
    );
    script.push_str(&format!(
        "SET SESSION tmp_memory_table_size = {size}, max_heap_table_size = {size};\n"
    ));
    for mode in ["OFF", "INTERNAL"] {
        script.push_str(&format!("SET GLOBAL rheap_takeover = {mode};\n"));
        if !q.ordered {
            script.push_str("--sorted_result\n");
        }
        script.push_str(&format!("{};\n", q.sql));
    }
    script.push_str(
        "SET GLOBAL rheap_takeover = DEFAULT;\nSET SESSION tmp_memory_table_size = DEFAULT, \
         max_heap_table_size = DEFAULT;\nDROP VIEW v1, v2;\nDROP TABLE t1, t2;\n",
    );
    std::fs::create_dir_all(out_dir())?;
    let path = out_dir().join(format!("fuzz_servers_{seed}_{case}.test"));
    std::fs::write(&path, &script)?;
    println!(
        "[fuzz servers] shrunk to {} rows; mtr case: {}\n--- stock\n{want}--- rheap\n{got}",
        rows.len(),
        path.display()
    );
    Ok(Mismatch {
        mode: Mode::Servers,
        seed,
        case,
        statement: q.sql.clone(),
        want: want.to_string(),
        got: got.to_string(),
        script: path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn some_cases_are_large() {
        let largest = (0..200)
            .map(|seed| {
                let d = Data::draw(&mut Rng::new(seed));
                (0..2)
                    .map(|t| d.rows.iter().filter(|(n, _)| *n == t).count())
                    .max()
                    .unwrap_or(0)
            })
            .filter(|&n| n > 1500)
            .count();
        // One in sixteen is drawn large, and most of those pass the small cases' most rows.
        assert!(
            (4..=30).contains(&largest),
            "{largest} of 200 cases are large"
        );
    }

    #[test]
    fn data_and_queries_come_from_the_seed() {
        let a = Data::draw(&mut Rng::new(3));
        let b = Data::draw(&mut Rng::new(3));
        assert_eq!(a.rows, b.rows);
        assert_eq!(a.tables, b.tables);
        let mut r = Rng::new(9);
        for _ in 0..100 {
            let large = r.one_in(2);
            let q = Query::draw(&mut r, large);
            assert!(
                q.sql.starts_with("SELECT") || q.sql.starts_with("WITH"),
                "{}",
                q.sql
            );
        }
    }
}
