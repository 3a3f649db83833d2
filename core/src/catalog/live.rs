//! Where the memory is: every live table, named or internal, with what it holds now, for
//! `information_schema.RHEAP_TABLES`.
//!
//! A table joins the list when it is made and leaves it when it is dropped
//! ([`crate::table::Table`]); what the list shows of it ([`Live`]) is read without the table's
//! lock: its [`Meter`]'s counts, and the row count, kind, owner and name the table and its
//! handlers publish. The list's lock is taken when a table is made or dropped (internal tables
//! mostly come from the pool of kept tables, made once) and when the view is read.

use crate::alloc::meter::Part;
use crate::alloc::{try_arc, Meter};
use crate::error::Result;
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// What a table is to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// A named table: ENGINE=RHEAP, or ENGINE=MEMORY served under `rheap_takeover=ALL`.
    Table = 0,
    /// CREATE TEMPORARY TABLE.
    Temporary = 1,
    /// One of the server's internal temporary tables, in use by a statement.
    Internal = 2,
    /// An internal table kept, empty, for a later statement ([`crate::recycle`]).
    Kept = 3,
}

impl Kind {
    /// The name `RHEAP_TABLES.KIND` shows.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Table => "TABLE",
            Kind::Temporary => "TEMPORARY",
            Kind::Internal => "INTERNAL",
            Kind::Kept => "KEPT",
        }
    }

    fn of(n: u8) -> Kind {
        match n {
            0 => Kind::Table,
            1 => Kind::Temporary,
            3 => Kind::Kept,
            _ => Kind::Internal,
        }
    }
}

/// Who may see a table in the view: the rule of the server's own view of such a thing, so that
/// `RHEAP_TABLES` tells a user nothing `information_schema.TABLES` and `PROCESSLIST` hide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// A user with some privilege on the table (`information_schema.TABLES`'s rule): a named
    /// table.
    Privileged,
    /// The owning connection's user, and users with PROCESS (`PROCESSLIST`'s rule): a
    /// TEMPORARY or internal table.
    Owner,
    /// Users with PROCESS only: a table no connection owns (a kept one).
    Process,
}

impl Audience {
    /// Who may see a table of `kind` owned by `connection` (0: none).
    pub fn of(kind: Kind, connection: u64) -> Audience {
        match kind {
            Kind::Table => Audience::Privileged,
            Kind::Temporary | Kind::Internal if connection != 0 => Audience::Owner,
            Kind::Temporary | Kind::Internal | Kind::Kept => Audience::Process,
        }
    }
}

/// One live table, as the view shows it.
#[derive(Debug)]
pub struct Live {
    meter: Meter,
    /// The table's memory limit.
    limit: u64,
    rows: AtomicU64,
    kind: AtomicU8,
    /// The connection that owns it (0: none).
    connection: AtomicU64,
    /// The table's path: `./schema/name` for a named table, the server's path of an internal one.
    name: Mutex<String>,
    /// Its index in [`LIST`].
    slot: AtomicUsize,
}

/// A table as `RHEAP_TABLES` shows it, at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub kind: Kind,
    /// 0: none.
    pub connection: u64,
    pub name: String,
    pub rows: u64,
    pub data_bytes: u64,
    pub index_bytes: u64,
    pub blocks: u64,
    pub limit: u64,
}

static LIST: Mutex<Vec<Arc<Live>>> = Mutex::new(Vec::new());

fn list() -> MutexGuard<'static, Vec<Arc<Live>>> {
    // Each change is one push or swap_remove: a poisoned list is still consistent.
    LIST.lock().unwrap_or_else(|e| e.into_inner())
}

/// Gives back the list's spare room (the plugin is unloading: the tables are gone, and the
/// plugin's statics outlive it).
pub fn shrink() {
    list().shrink_to_fit();
}

/// Adds a new table, counted by `meter`, of `limit` bytes, to the list; `OutOfMemory` when its
/// entry cannot be had.
pub fn register(meter: Meter, limit: u64) -> Result<Arc<Live>> {
    let live = try_arc(Live {
        meter,
        limit,
        rows: AtomicU64::new(0),
        kind: AtomicU8::new(Kind::Internal as u8),
        connection: AtomicU64::new(0),
        name: Mutex::new(String::new()),
        slot: AtomicUsize::new(0),
    })?;
    let mut list = list();
    list.try_reserve(1)?;
    live.slot.store(list.len(), Ordering::Relaxed);
    list.push(live.clone());
    Ok(live)
}

/// Takes a table off the list (it is being dropped).
pub fn unregister(live: &Arc<Live>) {
    let mut list = list();
    let i = live.slot.load(Ordering::Relaxed);
    if list.get(i).is_some_and(|l| Arc::ptr_eq(l, live)) {
        list.swap_remove(i);
        if let Some(moved) = list.get(i) {
            moved.slot.store(i, Ordering::Relaxed);
        }
    }
}

/// Every live table now; `OutOfMemory` when the copy cannot be had.
pub fn snapshot() -> Result<Vec<Row>> {
    let list = list();
    let mut rows = Vec::new();
    rows.try_reserve_exact(list.len())?;
    for l in list.iter() {
        rows.push(l.row()?);
    }
    Ok(rows)
}

impl Row {
    /// Who may see this row.
    pub fn audience(&self) -> Audience {
        Audience::of(self.kind, self.connection)
    }
}

impl Live {
    pub fn meter(&self) -> &Meter {
        &self.meter
    }

    /// Publishes the table's row count.
    #[inline]
    pub fn set_rows(&self, rows: u64) {
        self.rows.store(rows, Ordering::Relaxed);
    }

    /// Says what the table now is and which connection owns it (0: none).
    pub fn set_kind(&self, kind: Kind, connection: u64) {
        self.kind.store(kind as u8, Ordering::Relaxed);
        self.connection.store(connection, Ordering::Relaxed);
    }

    /// Names the table (its path). The name's room is kept from one name to the next, so a
    /// kept internal table renamed at each statement allocates nothing; without room for it
    /// (out of memory), the name is left empty.
    pub fn set_name(&self, name: &str) {
        let mut n = self.name.lock().unwrap_or_else(|e| e.into_inner());
        if n.as_str() == name {
            return;
        }
        n.clear();
        if n.try_reserve(name.len()).is_ok() {
            n.push_str(name);
        }
    }

    fn row(&self) -> Result<Row> {
        let name = self.name.lock().unwrap_or_else(|e| e.into_inner());
        Ok(Row {
            kind: Kind::of(self.kind.load(Ordering::Relaxed)),
            connection: self.connection.load(Ordering::Relaxed),
            name: crate::alloc::try_string(&name)?,
            rows: self.rows.load(Ordering::Relaxed),
            data_bytes: self.meter.part_bytes(Part::Rows),
            index_bytes: self.meter.part_bytes(Part::Index),
            blocks: self.meter.blocks(),
            limit: self.limit,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(name: &str) -> Vec<Row> {
        snapshot()
            .unwrap()
            .into_iter()
            .filter(|r| r.name == name)
            .collect()
    }

    #[test]
    fn who_sees_a_table_goes_by_its_kind_and_owner() {
        assert_eq!(Audience::of(Kind::Table, 0), Audience::Privileged);
        // A named table's handler may record who opened it: still the privilege rule.
        assert_eq!(Audience::of(Kind::Table, 9), Audience::Privileged);
        for kind in [Kind::Temporary, Kind::Internal] {
            assert_eq!(Audience::of(kind, 9), Audience::Owner);
            assert_eq!(
                Audience::of(kind, 0),
                Audience::Process,
                "{kind:?} of no one"
            );
        }
        assert_eq!(Audience::of(Kind::Kept, 0), Audience::Process);
        assert_eq!(Audience::of(Kind::Kept, 9), Audience::Process);
    }

    #[test]
    fn tables_are_listed_while_they_live() {
        let a = register(Meter::unlimited(), 100).unwrap();
        let b = register(Meter::unlimited(), 200).unwrap();
        a.set_name("./live/a");
        a.set_kind(Kind::Table, 0);
        b.set_name("./live/b");
        b.set_kind(Kind::Temporary, 7);
        b.set_rows(3);
        let block = b.meter().for_part(Part::Index).take(4096, 1).unwrap();
        assert_eq!(
            find("./live/b"),
            [Row {
                kind: Kind::Temporary,
                connection: 7,
                name: "./live/b".into(),
                rows: 3,
                data_bytes: 0,
                index_bytes: 4096,
                blocks: 1,
                limit: 200
            }]
        );
        b.meter().for_part(Part::Index).give(block);
        unregister(&a);
        assert!(find("./live/a").is_empty());
        assert_eq!(find("./live/b").len(), 1, "the other one stays");
        b.set_name("./live/c");
        assert_eq!(find("./live/c")[0].limit, 200);
        unregister(&b);
        assert!(find("./live/c").is_empty());
    }
}
