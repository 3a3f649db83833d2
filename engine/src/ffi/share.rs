//! A table as handlers have it open: a named table shared by every handler (the core
//! [`Table`] behind a lock, plus the server's `THR_LOCK` that implements MEMORY's table-level
//! locking), or an internal temporary table that its one handler owns.

use super::definition::DefKey;
use super::handler::Buffers;
use crate::alloc::cache;
use crate::error::{Error, Result};
use crate::registry::Registry;
use crate::status::{self, Counter};
use crate::table::Table;
use std::ffi::c_void;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Named tables of every connection.
pub static TABLES: Registry<Share> = Registry::new();

/// The server's `THR_LOCK` for one shared table, allocated by the shim.
#[derive(Debug)]
pub struct ThrLock(*mut c_void);

// SAFETY: a THR_LOCK is designed to be used from every connection thread; it guards itself
// with its own mutex. We only hand its address to the server.
unsafe impl Send for ThrLock {}
// SAFETY: as above; shared references only read the pointer.
unsafe impl Sync for ThrLock {}

impl ThrLock {
    pub fn new() -> Result<ThrLock> {
        // SAFETY: no preconditions; returns NULL when out of memory.
        let p = unsafe { rheap_sys::shim::rheap_thr_lock_new() };
        if p.is_null() {
            Err(Error::OutOfMemory)
        } else {
            Ok(ThrLock(p))
        }
    }

    pub fn as_ptr(&self) -> *mut c_void {
        self.0
    }
}

impl Drop for ThrLock {
    fn drop(&mut self) {
        // SAFETY: the pointer came from rheap_thr_lock_new and is freed once, here. The share
        // that owns it is gone, so no handler still holds a THR_LOCK_DATA on it.
        unsafe { rheap_sys::shim::rheap_thr_lock_free(self.0) }
    }
}

#[derive(Debug)]
pub struct Share {
    table: RwLock<Table>,
    pub thr_lock: ThrLock,
    /// An ENGINE=MEMORY table served by rheap (`rheap_takeover=ALL`).
    pub for_memory: bool,
}

impl Share {
    pub fn new(table: Table, for_memory: bool) -> Result<Share> {
        let thr_lock = ThrLock::new()?;
        status::add(Counter::TablesLive, 1);
        Ok(Share {
            table: RwLock::new(table),
            thr_lock,
            for_memory,
        })
    }
}

/// A panic while the table was being changed may have left it inconsistent: refuse to use it.
fn poisoned() -> Error {
    Error::internal("the table was left inconsistent by an earlier internal error; drop it")
}

impl Drop for Share {
    fn drop(&mut self) {
        status::sub(Counter::TablesLive, 1);
    }
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
    key: Option<DefKey>,
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
    pub fn new(table: Table, key: Option<DefKey>) -> Internal {
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
    pub fn built_from(&self, key: &DefKey) -> bool {
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
    /// [`recycle::counter`]: super::recycle::counter
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
    #[link_section = ".text.hot.rheap.share.account"]
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
        // SAFETY: no preconditions; the shim forwards to the server's accounting callback.
        unsafe { rheap_sys::shim::rheap_move_memory_to_thread(delta) }
    }
}

/// A table as a handler has it open.
#[derive(Debug)]
pub enum Open {
    /// An internal temporary table, the handler's own.
    Internal(Box<Internal>),
    /// A named table, shared with the other handlers that have it open.
    Shared(Arc<Share>),
}

impl Open {
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

    /// The server's `THR_LOCK` of a named table (internal tables are never locked).
    pub fn thr_lock(&self) -> *mut c_void {
        match self {
            Open::Internal(_) => std::ptr::null_mut(),
            Open::Shared(s) => s.thr_lock.as_ptr(),
        }
    }
}

/// A table read through [`Open::read`].
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
