//! A table as handlers have it open: a named table shared by every handler (the [`Table`]
//! behind a lock, plus the lock the server keeps for it, `L`: in the plugin the server's
//! `THR_LOCK` that implements MEMORY's table-level locking), or an internal temporary table
//! that its one handler owns.

use crate::alloc::{cache, system};
use crate::catalog::live::Kind;
use crate::error::{Error, Result};
use crate::key::Image;
use crate::recycle::shape::Shape;
use crate::status::{self, Counter};
use crate::table::Table;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// A named table: the table every handler that has it open shares, and the server's lock.
#[derive(Debug)]
pub struct Share<L> {
    table: RwLock<Table>,
    /// The lock the server takes on the table (the plugin's `THR_LOCK`).
    pub lock: L,
    /// An ENGINE=MEMORY table served by rheap (`rheap_takeover=ALL`).
    pub for_memory: bool,
}

impl<L> Share<L> {
    /// One more live table.
    pub fn new(table: Table, lock: L, for_memory: bool) -> Share<L> {
        status::add(Counter::TablesLive, 1);
        Share {
            table: RwLock::new(table),
            lock,
            for_memory,
        }
    }

    /// Names the table in the list of live tables ([`crate::catalog::live`]): its path, and with a
    /// `kind` what it is and which connection owns it (0: none).
    pub fn describe(&self, path: &str, kind: Option<(Kind, u64)>) {
        if let Ok(t) = self.table.read() {
            t.live().set_name(path);
            if let Some((kind, connection)) = kind {
                t.live().set_kind(kind, connection);
            }
        }
    }
}

/// A panic while the table was being changed may have left it inconsistent: refuse to use it.
fn poisoned() -> Error {
    Error::internal("the table was left inconsistent by an earlier internal error; drop it")
}

impl<L> Drop for Share<L> {
    fn drop(&mut self) {
        status::sub(Counter::TablesLive, 1);
    }
}

/// The buffers of a handler that an internal table keeps when it closes. A handler serves one
/// statement and a kept table many ([`crate::recycle`]), so the next statement's handler starts with
/// the room this one made: a GROUP BY's key image and its keys' statistics, which would
/// otherwise be allocated and freed by every statement. Both are bounded by the table's keys.
#[derive(Debug, Default)]
pub struct Buffers {
    pub(crate) key: Image,
    pub(crate) rec_per_key: Vec<Option<u64>>,
}

/// One of the server's internal temporary tables. The server reaches it through the one
/// handler that created it, from one thread at a time, so it needs no lock and no name.
#[derive(Debug)]
pub struct Internal {
    table: Table,
    /// The bytes of its blocks last moved to the running thread's memory accounting.
    accounted: u64,
    /// A panic happened while the table was being changed (as a poisoned lock): it may be
    /// inconsistent, so it is not used again.
    poisoned: bool,
    /// The key of the definition it was built from, when it may serve again (`recycle`).
    key: Option<Shape>,
    /// Bytes of its blocks that count as cached (claimed from the block cache's bound): those
    /// it kept when it was last retired, for as long as it holds them, also while a statement
    /// uses it again. So a table kept from statement to statement claims its blocks once, not
    /// at every statement: a claim moves counters that every connection shares.
    kept: u64,
    /// [`BlockCache::bound_changes`] when `kept` was last known to be within the bound.
    ///
    /// [`BlockCache::bound_changes`]: crate::alloc::cache::BlockCache::bound_changes
    bound_seen: u64,
    /// Rows written and not yet counted in `Rheap_rows_written`: those of its last use,
    /// counted with the next change of its counters (one per statement, not per row).
    pub rows_written: u64,
    /// What its last handler left for the next one.
    pub buffers: Buffers,
}

impl Internal {
    /// A new internal temporary table: one more built (served, see
    /// [`Counter::InternalTablesCreated`]), and live.
    pub fn new(table: Table, key: Option<Shape>) -> Internal {
        status::change(&[
            (Counter::TablesLive, 1),
            (Counter::InternalTablesCreated, 1),
        ]);
        Internal {
            table,
            accounted: 0,
            poisoned: false,
            key,
            kept: 0,
            bound_seen: 0,
            rows_written: 0,
            buffers: Buffers::default(),
        }
    }

    /// Whether it was built from a definition with this key.
    pub fn table(&self) -> &Table {
        &self.table
    }

    pub fn built_from(&self, key: &Shape) -> bool {
        self.key.as_ref() == Some(key)
    }

    /// At close: empties the table and keeps it as a new one, if it can serve again (built from
    /// a key, not poisoned). Its blocks stay with it when they are at most `keep_up_to` bytes
    /// and the block cache has room to count them as cached ([`BlockCache::claim`]), else they
    /// go back to the cache. Then its memory is no longer the thread's, as when it is dropped.
    /// Returns the key's tag when it is kept.
    ///
    /// A kept table is not live, yet it stays in `Rheap_tables_live`'s count and its rows stay
    /// out of `Rheap_rows_written`'s until it serves again or goes ([`revive`](Self::revive),
    /// `drop`), which [`recycle::counter`] makes up for while it is kept: so a table used
    /// statement after statement changes the counters, which every connection shares, once
    /// per statement rather than twice.
    ///
    /// [`recycle::counter`]: crate::recycle::counter
    ///
    /// [`BlockCache::claim`]: crate::alloc::cache::BlockCache::claim
    pub fn retire(&mut self, keep_up_to: u64) -> Option<u64> {
        let tag = self.key.as_ref().filter(|_| !self.poisoned)?.tag();
        let keep = self.table.memory_bytes() <= keep_up_to;
        if keep {
            self.table.renew(0, true);
        }
        // What it kept (a large BLOB row's block went back all the same): usually the blocks
        // it kept last time, already claimed.
        if !(keep && self.claim(self.table.memory_bytes())) {
            self.claim_none();
            self.table.renew(0, false);
            if self.table.memory_bytes() != 0 {
                return None;
            }
        }
        self.release_memory();
        Some(tag)
    }

    /// Open again, as a new table. The blocks it kept stay counted as cached.
    /// It serves one more internal temporary table, built earlier (`Rheap_internal_tables_reused`),
    /// and its last use's rows are counted. `Rheap_tables_live` does not change: the table left
    /// it when retired and comes back now, two changes that cancel out, so neither is made.
    pub fn revive(&mut self) {
        status::change(&[(Counter::InternalTablesReused, 1), self.count_rows()]);
    }

    /// The change that counts its rows not yet counted in `Rheap_rows_written` (and forgets
    /// them), to make with its other counters.
    fn count_rows(&mut self) -> (Counter, i64) {
        (
            Counter::RowsWritten,
            std::mem::take(&mut self.rows_written) as i64,
        )
    }

    /// Makes `bytes` of its blocks the ones counted as cached. False when the cache's bound has
    /// no room for more (its claim then unchanged), or when what it claims is over the bound
    /// (lowered, by `rheap_block_cache_size`, since it claimed them): then it should keep none.
    fn claim(&mut self, bytes: u64) -> bool {
        // Read first: a bound set from now on changes it, and is checked next time.
        let changes = cache::CACHE.bound_changes();
        if bytes > self.kept {
            if !cache::CACHE.claim(bytes - self.kept) {
                return false;
            }
            // Claimed under the bound, with every other cached and claimed byte.
            self.bound_seen = changes;
        } else if bytes < self.kept {
            cache::CACHE.unclaim(self.kept - bytes);
        }
        self.kept = bytes;
        // The bound's total is read (a count every CPU changes) only after the bound was set.
        if bytes == 0 || changes == self.bound_seen {
            return true;
        }
        let within = cache::CACHE.within_bound();
        if within {
            self.bound_seen = changes;
        }
        within
    }

    /// None of its blocks count as cached any more: they are a table's again.
    fn claim_none(&mut self) {
        if self.kept != 0 {
            cache::CACHE.unclaim(std::mem::take(&mut self.kept));
        }
    }

    /// Its memory is no longer in the running thread's accounting.
    fn release_memory(&mut self) {
        move_to_thread(-(self.accounted as i64));
        self.accounted = 0;
    }

    /// Brings the server's memory accounting up to date with the table, after a change.
    ///
    /// Blocks come from `my_malloc`, which counts them in the server's (global) Memory_used
    /// when they are first allocated. An internal temporary table's blocks are moreover the
    /// running thread's, as HEAP's thread-specific allocations are: the bytes move from the
    /// global count to the thread's (its Memory_used, PROCESSLIST's MEMORY_USED,
    /// max_session_mem_used), and back when the table shrinks or goes.
    fn account(&mut self) {
        let now = self.table.memory_bytes();
        if now < self.kept {
            // Blocks it kept went back (the table emptied, a large piece freed): what is
            // claimed stays within what it holds.
            self.claim(now);
        }
        move_to_thread(now as i64 - self.accounted as i64);
        self.accounted = now;
    }
}

impl Drop for Internal {
    fn drop(&mut self) {
        // Blocks it kept are a table's again, and go back to the cache as any dropped table's.
        self.claim_none();
        // Live or kept, it still counts in `Rheap_tables_live`, and its rows are not counted.
        status::change(&[(Counter::TablesLive, -1), self.count_rows()]);
        self.release_memory();
    }
}

/// Moves `delta` bytes of the server's memory accounting from the global count to the running
/// thread's (back when negative).
fn move_to_thread(delta: i64) {
    if delta != 0 {
        system::move_to_thread(delta);
    }
}

/// A table as a handler has it open.
#[derive(Debug)]
pub enum Open<L> {
    /// An internal temporary table, the handler's own.
    Internal(Box<Internal>),
    /// A named table, shared with the other handlers that have it open.
    Shared(Arc<Share<L>>),
}

impl<L> Open<L> {
    /// The table, to read.
    #[inline(always)]
    pub fn read(&self) -> Result<TableRead<'_>> {
        Ok(match self {
            Open::Internal(t) if t.poisoned => return Err(poisoned()),
            Open::Internal(t) => TableRead::Internal(&t.table),
            Open::Shared(s) => TableRead::Shared(s.table.read().map_err(|_| poisoned())?),
        })
    }

    /// The table, to change. An internal table's memory accounting follows the change when
    /// the returned guard goes.
    #[inline(always)]
    pub fn write(&mut self) -> Result<TableWrite<'_>> {
        Ok(match self {
            Open::Internal(t) if t.poisoned => return Err(poisoned()),
            Open::Internal(t) => TableWrite::Internal(t),
            Open::Shared(s) => TableWrite::Shared(s.table.write().map_err(|_| poisoned())?),
        })
    }

    /// The server's lock of a named table (internal tables are never locked).
    pub fn lock(&self) -> Option<&L> {
        match self {
            Open::Internal(_) => None,
            Open::Shared(s) => Some(&s.lock),
        }
    }
}

/// A table read through [`Open::read`].
#[allow(missing_debug_implementations)]
pub enum TableRead<'a> {
    Internal(&'a Table),
    Shared(RwLockReadGuard<'a, Table>),
}

impl Deref for TableRead<'_> {
    type Target = Table;
    fn deref(&self) -> &Table {
        match self {
            TableRead::Internal(t) => t,
            TableRead::Shared(g) => g,
        }
    }
}

/// A table changed through [`Open::write`].
#[allow(missing_debug_implementations)]
pub enum TableWrite<'a> {
    Internal(&'a mut Internal),
    Shared(RwLockWriteGuard<'a, Table>),
}

impl Deref for TableWrite<'_> {
    type Target = Table;
    fn deref(&self) -> &Table {
        match self {
            TableWrite::Internal(t) => &t.table,
            TableWrite::Shared(g) => g,
        }
    }
}

impl DerefMut for TableWrite<'_> {
    fn deref_mut(&mut self) -> &mut Table {
        match self {
            TableWrite::Internal(t) => &mut t.table,
            TableWrite::Shared(g) => &mut *g,
        }
    }
}

impl Drop for TableWrite<'_> {
    fn drop(&mut self) {
        if let TableWrite::Internal(t) = self {
            t.poisoned |= std::thread::panicking();
            t.account();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{self, counters_lock, rec, shape_of};

    fn filled(key: Option<Shape>, rows: i32) -> Internal {
        let mut t = Internal::new(testing::table(true), key);
        for i in 0..rows {
            t.table.write(&rec(Some(i), 0, i as u8)).unwrap();
        }
        t.account();
        t
    }

    #[test]
    fn an_internal_table_counts_as_live_and_its_rows_when_it_goes() {
        let _g = counters_lock();
        let live = status::get(Counter::TablesLive);
        let created = status::get(Counter::InternalTablesCreated);
        let written = status::get(Counter::RowsWritten);
        let mut t = filled(None, 2);
        assert_eq!(status::get(Counter::TablesLive), live + 1);
        assert_eq!(status::get(Counter::InternalTablesCreated), created + 1);
        t.rows_written = 5;
        assert_eq!(t.retire(u64::MAX), None, "no definition key: not kept");
        drop(t);
        assert_eq!(status::get(Counter::TablesLive), live);
        assert_eq!(status::get(Counter::RowsWritten), written + 5);
    }

    #[test]
    fn a_retired_table_is_empty_and_revives_with_its_counts() {
        let _g = counters_lock();
        let key = shape_of("share-retire", 0);
        let mut t = filled(Some(key.clone()), 3);
        assert!(t.built_from(&key));
        assert!(!t.built_from(&shape_of("share-retire", 1)));
        let held = t.table.memory_bytes();
        assert!(held > 0);
        t.rows_written = 3;
        // Small enough: emptied, keeping its blocks (counted as cached).
        assert_eq!(t.retire(u64::MAX), Some(key.tag()));
        assert_eq!(t.table.records(), 0);
        assert_eq!(t.table.memory_bytes(), held, "its blocks kept");
        assert_eq!(t.kept, held, "and claimed");
        assert_eq!(t.accounted, 0, "no longer the thread's");
        let reused = status::get(Counter::InternalTablesReused);
        let written = status::get(Counter::RowsWritten);
        t.revive();
        assert_eq!(status::get(Counter::InternalTablesReused), reused + 1);
        assert_eq!(status::get(Counter::RowsWritten), written + 3);
        assert_eq!(t.rows_written, 0, "counted once");
        // Used again; its rows go where the last ones were.
        t.table.write(&rec(Some(1), 0, 0)).unwrap();
        t.account();
        assert_eq!(t.table.memory_bytes(), held);
        // Too large to keep its blocks: kept without them.
        assert_eq!(t.retire(0), Some(key.tag()));
        assert_eq!((t.table.memory_bytes(), t.kept), (0, 0));
        assert_eq!(t.table.records(), 0);
    }

    #[test]
    fn a_panic_while_writing_poisons_an_internal_table_and_it_is_not_kept() {
        let _g = counters_lock();
        let key = shape_of("share-poison", 0);
        let mut open: Open<()> = Open::Internal(Box::new(filled(Some(key), 1)));
        assert!(open.read().is_ok());
        assert!(open.lock().is_none());
        // A read guard dropped in a panic does not poison.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _t = open.read().unwrap();
            panic!("while reading");
        }));
        assert!(r.is_err());
        assert!(open.read().is_ok());
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _t = open.write().unwrap();
            panic!("while writing");
        }));
        assert!(r.is_err());
        assert!(matches!(open.read().err(), Some(Error::Internal(_))));
        assert!(matches!(open.write().err(), Some(Error::Internal(_))));
        let Open::Internal(mut t) = open else {
            unreachable!()
        };
        assert_eq!(t.retire(u64::MAX), None, "a poisoned table is not kept");
    }

    #[test]
    fn a_panic_while_writing_poisons_a_named_table() {
        let _g = counters_lock();
        let share = Arc::new(Share::new(testing::table(false), 7u8, false));
        let mut open = Open::Shared(share.clone());
        assert_eq!(open.lock(), Some(&7));
        open.write().unwrap().write(&rec(Some(1), 0, 0)).unwrap();
        assert_eq!(Open::Shared(share.clone()).read().unwrap().records(), 1);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _t = open.write().unwrap();
            panic!("while writing");
        }));
        assert!(r.is_err());
        assert!(matches!(
            Open::Shared(share).read().err(),
            Some(Error::Internal(_))
        ));
    }
}
