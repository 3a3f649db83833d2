//! Twin tables, one server: a random definition made once as MEMORY's table and once as
//! rheap's, the same random statements on both, and every answer compared.
//!
//! Each case draws a [`Setup`]: rheap's twin is an ENGINE=RHEAP table, or an ENGINE=MEMORY
//! table served by rheap (`rheap_takeover=ALL`, beside one that HEAP serves), made under
//! `rheap_table_size_limit` ACTUAL (the default) or HEAP, at the server's default
//! `max_heap_table_size` or at one small enough that the tables fill. "Table is full" is
//! compared where MEMORY's row is promised: under HEAP, and for MEMORY's tables served under
//! ALL whatever the setting; an RHEAP table under ACTUAL fills at its real bytes instead, so
//! such cases keep the default limit, which no case reaches.
//!
//! A case is a definition and a list of [`Step`]s drawn from the case's own generator before
//! anything runs, so that any subset of them can be run again (to shrink a mismatch). After
//! each write the fuzzer also compares both tables' rows in scan order and what
//! information_schema.TABLES says of their rows and AUTO_INCREMENT.
//!
//! Orders MEMORY itself does not define are not compared: rows with equal keys in an index
//! scan come in the order of their addresses, so such reads compare with equal keys' rows
//! sorted ([`Order::ByKey`]), and reads whose rows among equal keys are the engine's choice
//! compare only where they land in key order ([`Order::KeyPositions`]). Deletes run in `id`
//! order, so that the slots rows free (which the next inserts take) are the same on both.

use super::outcome::Outcome;
use super::rng::Rng;
use super::schema::{Table, Type};
use crate::conformance::Limit;
use anyhow::Result;
use mysql::prelude::Queryable;
use mysql::Conn;
use std::collections::HashMap;

/// How a read's rows compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Row for row, in order.
    Exact,
    /// In order, but rows with equal key `k` in any order among themselves.
    ByKey(usize),
    /// Only the key `k` of each row, in order.
    KeyPositions(usize),
}

/// One step of a case; `{t}` stands for the table's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A write: its outcome, then both tables' rows and status are compared.
    Write(String),
    /// A read, compared as `Order` says.
    Read(String, Order),
    /// A HANDLER session (OPEN, these reads, CLOSE) on key `key` (None: a table scan); each
    /// read compared as [`Order::KeyPositions`] of that key, or exactly for a scan. A
    /// statement among the reads that is not a HANDLER read is a write, compared exactly: the
    /// next read must notice the change as MEMORY's does.
    Handler {
        key: Option<usize>,
        reads: Vec<String>,
    },
}

/// Where the two tables first answered differently.
#[derive(Debug, Clone)]
pub struct Diff {
    /// Index of the step (None: the CREATE TABLE).
    pub step: Option<usize>,
    /// The statement, with `{t}` for the table.
    pub sql: String,
    pub memory: Outcome,
    pub rheap: Outcome,
}

impl Diff {
    /// The difference at step `step` (`sql`) when the two outcomes are not the same.
    fn between(step: Option<usize>, sql: &str, memory: Outcome, rheap: Outcome) -> Option<Diff> {
        (memory != rheap).then(|| Diff {
            step,
            sql: sql.to_string(),
            memory,
            rheap,
        })
    }
}

/// The two sides: a connection each, and the engine rheap's table is made with.
pub struct Sides<'a> {
    pub memory: &'a mut Conn,
    pub rheap: &'a mut Conn,
    /// `RHEAP`, or `MEMORY` for a MEMORY table served under ALL ([`Setup::rheap_side`]).
    pub rheap_engine: &'static str,
    /// Statements both sides refused with "table is full" (ER_RECORD_FILE_FULL).
    pub both_full: u64,
}

/// `ER_RECORD_FILE_FULL`, as an outcome's error begins.
const FULL: &str = "1114:";

/// What rheap's twin table is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RheapSide {
    /// ENGINE=RHEAP.
    Rheap,
    /// ENGINE=MEMORY made under `rheap_takeover=ALL` (MEMORY's twin is made under OFF).
    MemoryUnderAll,
}

/// How a case's tables are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setup {
    pub rheap_side: RheapSide,
    /// `rheap_table_size_limit` when the tables are made.
    pub limit: Limit,
    /// `max_heap_table_size` of both (None: the server's default, 16M, which no case fills).
    pub max_heap_table_size: Option<u64>,
}

impl Setup {
    /// Draws a setup: small limits only where MEMORY's row for "table is full" is promised.
    fn random(r: &mut Rng) -> Setup {
        let (rheap_side, limit) = match r.below(3) {
            0 => (RheapSide::MemoryUnderAll, Limit::Actual),
            1 => (RheapSide::Rheap, Limit::Heap),
            _ => (RheapSide::Rheap, Limit::Actual),
        };
        let promised = rheap_side == RheapSide::MemoryUnderAll || limit == Limit::Heap;
        let max_heap_table_size =
            (promised && r.one_in(2)).then(|| *r.pick(&[16384u64, 32768, 65536]));
        Setup {
            rheap_side,
            limit,
            max_heap_table_size,
        }
    }

    /// The engine rheap's table is made with.
    pub fn rheap_engine(&self) -> &'static str {
        match self.rheap_side {
            RheapSide::Rheap => "RHEAP",
            RheapSide::MemoryUnderAll => "MEMORY",
        }
    }

    /// The session's and server's settings before the tables are made (both sessions).
    pub fn settings(&self) -> [String; 2] {
        let size = self
            .max_heap_table_size
            .map_or("DEFAULT".to_string(), |n| n.to_string());
        [
            format!("SET SESSION max_heap_table_size = {size}"),
            format!("SET GLOBAL rheap_table_size_limit = {}", self.limit.name()),
        ]
    }
}

const MEMORY_TABLE: &str = "t_m";
const RHEAP_TABLE: &str = "t_r";

impl Sides<'_> {
    /// Runs `sql` on both sides, `{t}` standing for each side's table and `{engine}` for its
    /// engine; the outcomes with the table named `t` and the engine `<engine>` (as messages
    /// name them).
    fn both(&mut self, sql: &str) -> Result<(Outcome, Outcome)> {
        let run = |conn: &mut Conn, table: &str, engine: &str| -> Result<Outcome> {
            let sql = sql.replace("{t}", table).replace("{engine}", engine);
            Ok(Outcome::of(conn, &sql)?
                .renamed(table, "t")
                .renamed(engine, "<engine>"))
        };
        let (m, r) = (
            run(self.memory, MEMORY_TABLE, "MEMORY")?,
            run(self.rheap, RHEAP_TABLE, self.rheap_engine)?,
        );
        let full = |o: &Outcome| o.error.as_deref().is_some_and(|e| e.starts_with(FULL));
        self.both_full += u64::from(full(&m) && full(&r));
        Ok((m, r))
    }

    /// Each side's map from `id` to the weight of key `k`.
    fn weights(&mut self, def: &Table, k: usize) -> Result<(Weights, Weights)> {
        let sql = format!("SELECT id, {} FROM {{t}}", def.key_weight(k));
        let (m, r) = self.both(&sql)?;
        let map = |o: Outcome| -> Weights {
            o.rows
                .into_iter()
                .map(|mut row| (std::mem::take(&mut row[0]), row.pop().unwrap_or_default()))
                .collect()
        };
        Ok((map(m), map(r)))
    }
}

type Weights = HashMap<String, String>;

/// Compares `sql`'s outcomes on both sides as `order` says; the statements it ran.
fn compare(
    sides: &mut Sides<'_>,
    def: &Table,
    sql: &str,
    order: Order,
    step: Option<usize>,
    ran: &mut u64,
) -> Result<Option<Diff>> {
    let (mut m, mut r) = sides.both(sql)?;
    *ran += 2;
    match order {
        Order::Exact => {}
        Order::ByKey(k) | Order::KeyPositions(k) => {
            let (wm, wr) = sides.weights(def, k)?;
            *ran += 2;
            if order == Order::ByKey(k) {
                (m, r) = (m.canonical_by_key(&wm), r.canonical_by_key(&wr));
            } else {
                (m, r) = (m.key_positions(&wm), r.key_positions(&wr));
            }
        }
    }
    Ok(Diff::between(step, sql, m, r))
}

/// The checks after each write: both tables' rows in scan order, and their status.
pub const AFTER_WRITE: [&str; 2] = [
    "SELECT * FROM {t}",
    "SELECT TABLE_ROWS, AUTO_INCREMENT FROM information_schema.TABLES \
     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{t}'",
];

/// Runs `steps` on new twin tables of `def`, made as `setup` says; the first difference, if
/// any. `ran` counts the statements sent (to both sides). The tables are dropped afterwards,
/// and `rheap_takeover` is back at INTERNAL however the case ended.
pub fn run_case(
    sides: &mut Sides<'_>,
    setup: &Setup,
    def: &Table,
    steps: &[Step],
    ran: &mut u64,
) -> Result<Option<Diff>> {
    let diff = made_and_run(sides, setup, def, steps, ran);
    sides
        .memory
        .query_drop("SET GLOBAL rheap_takeover = INTERNAL")?;
    diff
}

/// [`run_case`] but for the mode it leaves.
fn made_and_run(
    sides: &mut Sides<'_>,
    setup: &Setup,
    def: &Table,
    steps: &[Step],
    ran: &mut u64,
) -> Result<Option<Diff>> {
    sides.rheap_engine = setup.rheap_engine();
    sides.both("DROP TABLE IF EXISTS {t}")?;
    for sql in setup.settings() {
        sides.both(&sql)?;
    }
    let create = def.create("{t}", Some("{engine}"));
    let (m, r) = match setup.rheap_side {
        RheapSide::Rheap => sides.both(&create)?,
        RheapSide::MemoryUnderAll => {
            // HEAP's table made under OFF, rheap's under ALL, which stays for the case: a
            // TRUNCATE makes each again, and under ALL each stays with the engine it is on.
            sides.memory.query_drop("SET GLOBAL rheap_takeover = OFF")?;
            let made = |c: &mut Conn, t: &str| -> Result<Outcome> {
                let sql = create.replace("{t}", t).replace("{engine}", "MEMORY");
                Ok(Outcome::of(c, &sql)?
                    .renamed(t, "t")
                    .renamed("MEMORY", "<engine>"))
            };
            let m = made(sides.memory, MEMORY_TABLE)?;
            sides.memory.query_drop("SET GLOBAL rheap_takeover = ALL")?;
            (m, made(sides.rheap, RHEAP_TABLE)?)
        }
    };
    *ran += 2;
    let refused = m.error.is_some();
    if let Some(d) = Diff::between(None, &create, m, r) {
        return Ok(Some(d));
    }
    if refused {
        // Both refuse the definition alike: nothing more to compare.
        return Ok(None);
    }
    let diff = run_steps(sides, def, steps, ran);
    sides.both("DROP TABLE {t}")?;
    diff
}

fn run_steps(
    sides: &mut Sides<'_>,
    def: &Table,
    steps: &[Step],
    ran: &mut u64,
) -> Result<Option<Diff>> {
    for (i, step) in steps.iter().enumerate() {
        let at = Some(i);
        match step {
            Step::Write(sql) => {
                for sql in std::iter::once(sql.as_str()).chain(AFTER_WRITE) {
                    if let Some(d) = compare(sides, def, sql, Order::Exact, at, ran)? {
                        return Ok(Some(d));
                    }
                }
            }
            Step::Read(sql, order) => {
                if let Some(d) = compare(sides, def, sql, *order, at, ran)? {
                    return Ok(Some(d));
                }
            }
            Step::Handler { key, reads } => {
                // A BTREE key's reads compare in key order; a HASH key's rows (equal keys,
                // newest first) and a scan's exactly.
                let btree = key.filter(|&k| def.keys[k].btree);
                let weights_of = |sides: &mut Sides<'_>| match btree {
                    Some(k) => sides.weights(def, k).map(Some),
                    None => Ok(None),
                };
                let mut weights = weights_of(sides)?;
                sides.both("HANDLER {t} OPEN")?;
                let mut found = None;
                // MEMORY's NEXT and PREV on a HASH key search again for the key in a buffer
                // that other reads (a BTREE key's, another statement's) also write: after a
                // read that found no row, which leaves the buffer as it was, they are not
                // compared until a read finds one; on a unique key with no nullable part, whose
                // reads never write the buffer, they are never compared.
                let stale = key.is_some_and(|k| {
                    let key = &def.keys[k];
                    !key.btree
                        && key.unique
                        && key.parts.iter().all(|p| !def.columns[p.column].nullable)
                });
                let mut lost = stale;
                for sql in reads {
                    let (mut m, mut r) = sides.both(sql)?;
                    *ran += 2;
                    if !sql.starts_with("HANDLER") {
                        // A write between two reads: compared as it is; the keys change.
                        weights = weights_of(sides)?;
                    } else if let Some((wm, wr)) = &weights {
                        (m, r) = (m.key_positions(wm), r.key_positions(wr));
                    } else if key.is_some() {
                        if sql.contains(" = (") {
                            lost = stale || (m.error.is_none() && m.rows.is_empty());
                        } else if lost && (sql.contains(" NEXT") || sql.contains(" PREV")) {
                            continue;
                        }
                    }
                    found = Diff::between(at, sql, m, r);
                    if found.is_some() {
                        break;
                    }
                }
                sides.both("HANDLER {t} CLOSE")?;
                if found.is_some() {
                    return Ok(found);
                }
            }
        }
    }
    Ok(None)
}

/// Draws a case: a definition, `n` steps, and how the tables are made.
pub fn draw_case(r: &mut Rng, n: usize) -> (Table, Vec<Step>, Setup) {
    let setup = Setup::random(r);
    let def = Table::random(r);
    let mut gen = Gen {
        def: &def,
        next_id: 1,
        fills: setup.max_heap_table_size.is_some(),
        r,
    };
    let steps = (0..n).map(|_| gen.step()).collect();
    (def, steps, setup)
}

/// Draws steps for one definition.
struct Gen<'a> {
    def: &'a Table,
    /// The next `id` to write (ids are never written twice).
    next_id: i64,
    /// The tables have a small limit: some writes copy the table into itself, so that it
    /// fills.
    fills: bool,
    r: &'a mut Rng,
}

impl Gen<'_> {
    fn step(&mut self) -> Step {
        match self.r.below(20) {
            0..=9 => Step::Write(self.write()),
            10..=17 => self.read(),
            _ => self.handler(),
        }
    }

    /// A row's values, `id` first (NULL for an AUTO_INCREMENT id: the engine picks it).
    fn row(&mut self) -> String {
        let id = if self.def.auto_increment {
            "NULL".to_string()
        } else {
            self.next_id += 1;
            self.next_id.to_string()
        };
        let rest: Vec<String> = (1..self.def.columns.len())
            .map(|c| self.def.value(c, self.r))
            .collect();
        format!("({id}, {})", rest.join(", "))
    }

    fn rows(&mut self) -> String {
        let n = self.r.range(1, 4);
        (0..n).map(|_| self.row()).collect::<Vec<_>>().join(", ")
    }

    /// A column other than `id`, one in a key more often than not.
    fn column(&mut self) -> usize {
        if !self.def.keys.is_empty() && !self.r.one_in(3) {
            let k = self.r.pick(&self.def.keys);
            let p = self.r.pick(&k.parts);
            if p.column != 0 {
                return p.column;
            }
        }
        self.r.range(1, self.def.columns.len() as i64 - 1) as usize
    }

    /// A condition on one or two columns.
    fn cond(&mut self) -> String {
        let one = |g: &mut Self| {
            let c = g.column();
            let name = g.def.columns[c].name.clone();
            let v = g.def.columns[c].ty.value(g.r);
            match g.r.below(8) {
                0 | 1 => format!("{name} = {v}"),
                2 => format!("{name} IS NULL"),
                3 => format!("{name} > {v}"),
                4 => format!("{name} <= {v}"),
                5 => {
                    let w = g.def.columns[c].ty.value(g.r);
                    format!("{name} BETWEEN {v} AND {w}")
                }
                6 => {
                    let w = g.def.columns[c].ty.value(g.r);
                    format!("{name} IN ({v}, {w})")
                }
                _ => format!("{name} <> {v}"),
            }
        };
        let a = one(self);
        if self.r.one_in(3) {
            format!("{a} AND {}", one(self))
        } else {
            a
        }
    }

    fn limit(&mut self) -> String {
        if self.r.one_in(2) {
            format!(" LIMIT {}", self.r.range(1, 3))
        } else {
            String::new()
        }
    }

    fn write(&mut self) -> String {
        if self.fills && self.next_id < 100_000_000 && self.r.one_in(5) {
            // Every row again under new ids (above every id so far), in scan order: the
            // table doubles until it is full, and the rows before the full one stay.
            let id = if self.def.auto_increment {
                "NULL".to_string()
            } else {
                let offset = self.next_id;
                self.next_id = 2 * offset + 1;
                format!("id + {offset}")
            };
            let rest: Vec<&str> = (self.def.columns[1..].iter())
                .map(|c| c.name.as_str())
                .collect();
            return format!(
                "INSERT IGNORE INTO {{t}} SELECT {id}, {} FROM {{t}}",
                rest.join(", ")
            );
        }
        match self.r.below(20) {
            0..=5 => format!("INSERT INTO {{t}} VALUES {}", self.rows()),
            6 | 7 => format!("INSERT IGNORE INTO {{t}} VALUES {}", self.rows()),
            8 | 9 => format!("REPLACE INTO {{t}} VALUES {}", self.rows()),
            10 | 11 => {
                let row = self.row();
                let c = self.column();
                let v = self.def.value(c, self.r);
                format!(
                    "INSERT INTO {{t}} VALUES {row} ON DUPLICATE KEY UPDATE {} = {v}",
                    self.def.columns[c].name
                )
            }
            12..=14 => {
                let c = self.column();
                let v = self.def.value(c, self.r);
                let cond = self.cond();
                let limit = self.limit();
                let ignore = if self.r.one_in(3) { "IGNORE " } else { "" };
                format!(
                    "UPDATE {ignore}{{t}} SET {} = {v} WHERE {cond} ORDER BY id{limit}",
                    self.def.columns[c].name
                )
            }
            15..=17 => {
                let cond = self.cond();
                let limit = self.limit();
                format!("DELETE FROM {{t}} WHERE {cond} ORDER BY id{limit}")
            }
            18 => match self.r.below(4) {
                0 => "TRUNCATE TABLE {t}".into(),
                1 => "DELETE FROM {t}".into(),
                _ => "ALTER TABLE {t} DISABLE KEYS".into(),
            },
            _ => "ALTER TABLE {t} ENABLE KEYS".into(),
        }
    }

    /// The parts of key `k` written as its ORDER BY, in (`reverse`: against) the key's order.
    fn key_order(&self, k: usize, reverse: bool) -> String {
        self.def.keys[k]
            .parts
            .iter()
            .map(|p| {
                let c = &self.def.columns[p.column].name;
                let col = match p.prefix {
                    // A prefix key orders by the prefix only.
                    Some(n) => format!("LEFT({c}, {n})"),
                    None => c.clone(),
                };
                format!("{col}{}", if p.desc != reverse { " DESC" } else { "" })
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Equalities on the first `n` parts of key `k`.
    fn key_eq(&mut self, k: usize, n: usize) -> String {
        let parts = self.def.keys[k].parts.clone();
        parts
            .iter()
            .take(n)
            .map(|p| {
                let c = &self.def.columns[p.column];
                if c.nullable && self.r.one_in(6) {
                    format!("{} IS NULL", c.name)
                } else {
                    format!("{} = {}", c.name, c.ty.value(self.r))
                }
            })
            .collect::<Vec<_>>()
            .join(" AND ")
    }

    fn read(&mut self) -> Step {
        let keys = self.def.keys.len();
        if keys == 0 || self.r.one_in(5) {
            return match self.r.below(3) {
                0 => Step::Read("SELECT * FROM {t}".into(), Order::Exact),
                1 => {
                    let cond = self.cond();
                    // A table scan (no key: an index would order equal keys by address).
                    Step::Read(
                        format!("SELECT * FROM {{t}} USE INDEX () WHERE {cond}"),
                        Order::Exact,
                    )
                }
                _ => {
                    let c = self.column();
                    let n = &self.def.columns[c].name;
                    let (min, max) = self.min_max(c);
                    Step::Read(
                        format!("SELECT COUNT(*), COUNT({n}), {min}, {max} FROM {{t}}"),
                        Order::Exact,
                    )
                }
            };
        }
        let k = self.r.below(keys as u64) as usize;
        let key = self.def.keys[k].clone();
        let name = if key.name == "PRIMARY" {
            "`PRIMARY`".to_string()
        } else {
            key.name.clone()
        };
        let first = &self.def.columns[key.parts[0].column];
        let fname = first.name.clone();
        if !key.btree {
            // A HASH key answers whole-key lookups, rows with equal keys newest first.
            let eq = self.key_eq(k, key.parts.len());
            return Step::Read(
                format!("SELECT * FROM {{t}} FORCE INDEX ({name}) WHERE {eq}"),
                Order::Exact,
            );
        }
        let v = first.ty.value(self.r);
        let w = first.ty.value(self.r);
        let range = match self.r.below(6) {
            0 => format!("{fname} > {v}"),
            1 => format!("{fname} < {v}"),
            2 => format!("{fname} BETWEEN {v} AND {w}"),
            3 => format!("{fname} >= {v} AND {fname} <= {w}"),
            4 => format!("{fname} IS NULL OR {fname} > {v}"),
            _ => {
                let parts = self.r.range(1, key.parts.len() as i64) as usize;
                self.key_eq(k, parts)
            }
        };
        let from = format!("SELECT * FROM {{t}} FORCE INDEX ({name}) WHERE {range}");
        match self.r.below(6) {
            0 | 1 => Step::Read(from, Order::ByKey(k)),
            2 => {
                let reverse = self.r.one_in(2);
                let order = self.key_order(k, reverse);
                Step::Read(format!("{from} ORDER BY {order}"), Order::ByKey(k))
            }
            3 => {
                let reverse = self.r.one_in(2);
                let order = self.key_order(k, reverse);
                let n = self.r.range(1, 3);
                Step::Read(
                    format!("{from} ORDER BY {order} LIMIT {n}"),
                    Order::KeyPositions(k),
                )
            }
            4 => {
                let reverse = self.r.one_in(2);
                let order = self.key_order(k, reverse);
                Step::Read(format!("{from} ORDER BY {order}, id"), Order::Exact)
            }
            _ => {
                // MIN and MAX through the key (the server reads them from its ends).
                let (min, max) = self.min_max(key.parts[0].column);
                Step::Read(
                    format!("SELECT {min}, {max}, COUNT(*) FROM {{t}} FORCE INDEX ({name})"),
                    Order::Exact,
                )
            }
        }
    }

    /// MIN and MAX of column `c`, as their weights: which of several equal values (under the
    /// collation, 'a' and 'A ') an engine returns depends on the order MEMORY leaves to row
    /// addresses.
    fn min_max(&self, c: usize) -> (String, String) {
        let col = &self.def.columns[c];
        let w = |f: &str| col.ty.weight(&format!("{f}({})", col.name), None);
        (w("MIN"), w("MAX"))
    }

    /// A key value for a HANDLER read: every part of key `k`.
    fn handler_value(&mut self, k: usize) -> String {
        let parts = self.def.keys[k].parts.clone();
        parts
            .iter()
            .map(|p| {
                let c = &self.def.columns[p.column];
                match c.ty {
                    // HANDLER takes the key's values as they are; NULL reads nothing.
                    Type::Bit(_) => c.ty.value(self.r),
                    _ if c.nullable && self.r.one_in(8) => "NULL".into(),
                    _ => c.ty.value(self.r),
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn handler(&mut self) -> Step {
        let n = self.r.range(2, 8);
        if self.def.keys.is_empty() || self.r.one_in(4) {
            let mut reads = vec!["HANDLER {t} READ FIRST".to_string()];
            reads.extend((1..n).map(|_| "HANDLER {t} READ NEXT".to_string()));
            return Step::Handler { key: None, reads };
        }
        let k = self.r.below(self.def.keys.len() as u64) as usize;
        let name = match self.def.keys[k].name.as_str() {
            "PRIMARY" => "`PRIMARY`".to_string(),
            other => other.to_string(),
        };
        if !self.def.keys[k].btree {
            return self.hash_handler(k, &name, n);
        }
        let mut reads = Vec::new();
        let mut strict = false;
        for _ in 0..n {
            let op = match self.r.below(10) {
                0 => "FIRST".to_string(),
                1 => "LAST".to_string(),
                2 | 3 => "NEXT".to_string(),
                // After a `<` or `>` read that found nothing, MEMORY's PREV compares rows equal
                // to the key read by their addresses with bytes left in its buffer: undefined.
                4 | 5 if !strict => "PREV".to_string(),
                4 | 5 => "NEXT".to_string(),
                x => {
                    let cmp = ["=", ">=", "<=", ">", "<"][x as usize - 5];
                    format!("{cmp} ({})", self.handler_value(k))
                }
            };
            strict = op.starts_with("> ") || op.starts_with("< ");
            reads.push(format!("HANDLER {{t}} READ {name} {op}"));
            if self.r.one_in(6) {
                // A write between two reads, then a read that positions afresh. MEMORY's
                // cursor steps from where it was only when the change bumped the table's key
                // version (rows added or deleted); an UPDATE, or a write refused for a
                // duplicate after it put some keys in and took them out again, leaves it
                // walking a stale path through its tree, which is no behaviour to match.
                let write = match self.r.below(3) {
                    0 => format!("INSERT INTO {{t}} VALUES {}", self.rows()),
                    1 => format!("INSERT IGNORE INTO {{t}} VALUES {}", self.rows()),
                    _ => format!("DELETE FROM {{t}} WHERE {} ORDER BY id", self.cond()),
                };
                reads.push(write);
                let first = if self.r.one_in(2) { "FIRST" } else { "LAST" };
                reads.push(format!("HANDLER {{t}} READ {name} {first}"));
                strict = false;
            }
        }
        Step::Handler {
            key: Some(k),
            reads,
        }
    }

    /// A HANDLER session on HASH key `k` (named `name`), `n` reads: whole-key reads, NEXT and
    /// PREV along the rows of the key read, now and then FIRST or LAST (refused) and a write
    /// between reads (the next step then reports the change, and a read positions afresh).
    fn hash_handler(&mut self, k: usize, name: &str, n: i64) -> Step {
        let mut reads = Vec::new();
        for i in 0..n {
            let op = match self.r.below(12) {
                _ if i == 0 => format!("= ({})", self.handler_value(k)),
                0..=2 => format!("= ({})", self.handler_value(k)),
                3..=5 => "NEXT".to_string(),
                6..=8 => "PREV".to_string(),
                9 => format!("NEXT LIMIT {}", self.r.range(2, 4)),
                10 => format!("PREV LIMIT {}", self.r.range(2, 4)),
                _ => self.r.pick(&["FIRST", "LAST"]).to_string(),
            };
            reads.push(format!("HANDLER {{t}} READ {name} {op}"));
            if self.r.one_in(8) {
                let write = match self.r.below(2) {
                    0 => format!("INSERT INTO {{t}} VALUES {}", self.rows()),
                    _ => format!("DELETE FROM {{t}} WHERE {} ORDER BY id", self.cond()),
                };
                reads.push(write);
                reads.push(format!("HANDLER {{t}} READ {name} NEXT"));
                reads.push(format!(
                    "HANDLER {{t}} READ {name} = ({})",
                    self.handler_value(k)
                ));
            }
        }
        Step::Handler {
            key: Some(k),
            reads,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_are_drawn_alike_from_one_seed() {
        let a = draw_case(&mut Rng::new(42), 30);
        let b = draw_case(&mut Rng::new(42), 30);
        assert_eq!(a, b);
        let (def, steps, _) = a;
        assert_eq!(steps.len(), 30);
        for s in &steps {
            let sql = match s {
                Step::Write(s) | Step::Read(s, _) => s.clone(),
                Step::Handler { reads, .. } => reads.join(";"),
            };
            assert!(sql.contains("{t}"), "{sql}");
            if sql.starts_with("DELETE") && sql.contains("WHERE") {
                assert!(
                    sql.contains("ORDER BY id"),
                    "deletes free slots in id order: {sql}"
                );
            }
        }
        assert!(def.create("t", None).starts_with("CREATE TABLE t"));
    }

    #[test]
    fn small_limits_only_where_memorys_full_row_is_promised() {
        let mut r = Rng::new(7);
        let setups: Vec<Setup> = (0..300).map(|_| Setup::random(&mut r)).collect();
        for s in &setups {
            if s.rheap_side == RheapSide::Rheap && s.limit == Limit::Actual {
                assert_eq!(s.max_heap_table_size, None, "{s:?}");
            }
        }
        let drawn = |f: &dyn Fn(&Setup) -> bool| setups.iter().any(f);
        assert!(drawn(&|s| s.rheap_side == RheapSide::MemoryUnderAll
            && s.limit == Limit::Actual
            && s.max_heap_table_size.is_some()));
        assert!(drawn(
            &|s| s.limit == Limit::Heap && s.max_heap_table_size.is_some()
        ));
        assert!(drawn(
            &|s| s.rheap_side == RheapSide::Rheap && s.limit == Limit::Actual
        ));
    }

    #[test]
    fn hash_keys_get_handler_sessions_that_step_both_ways() {
        let mut r = Rng::new(11);
        let mut both = (false, false);
        for _ in 0..200 {
            let (def, steps, _) = draw_case(&mut r, 40);
            for s in steps {
                if let Step::Handler {
                    key: Some(k),
                    reads,
                } = s
                {
                    if !def.keys[k].btree {
                        assert!(reads[0].contains(" = ("), "{reads:?}");
                        both.0 |= reads.iter().any(|q| q.ends_with(" NEXT"));
                        both.1 |= reads.iter().any(|q| q.ends_with(" PREV"));
                    }
                }
            }
        }
        assert_eq!(both, (true, true));
    }
}
