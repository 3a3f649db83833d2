//! A table as the handlers share it: the core [`Table`] behind a lock, plus the server's
//! `THR_LOCK` that implements MEMORY's table-level locking.

use crate::error::{Error, Result};
use crate::registry::Registry;
use crate::status::{self, Counter};
use crate::table::Table;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

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
    /// None for internal temporary tables, which the server never locks.
    pub thr_lock: Option<ThrLock>,
    /// An ENGINE=MEMORY table served by rheap (`rheap_takeover=ALL`).
    pub for_memory: bool,
    /// For internal temporary tables, the bytes of their blocks last moved to the running
    /// thread's memory accounting.
    accounted: AtomicU64,
}

impl Share {
    pub fn new(table: Table, shared: bool, for_memory: bool) -> Result<Share> {
        let thr_lock = if shared { Some(ThrLock::new()?) } else { None };
        status::add(Counter::TablesLive, 1);
        Ok(Share {
            table: RwLock::new(table),
            thr_lock,
            for_memory,
            accounted: AtomicU64::new(0),
        })
    }

    pub fn read(&self) -> Result<RwLockReadGuard<'_, Table>> {
        self.table.read().map_err(|_| poisoned())
    }

    pub fn write(&self) -> Result<RwLockWriteGuard<'_, Table>> {
        self.table.write().map_err(|_| poisoned())
    }
}

/// A panic while the table was being changed may have left it inconsistent: refuse to use it.
fn poisoned() -> Error {
    Error::Internal("the table was left inconsistent by an earlier internal error; drop it".into())
}

impl Share {
    /// Brings the server's memory accounting up to date with `table`, after a change.
    ///
    /// Blocks come from `my_malloc`, which counts them in the server's (global) Memory_used
    /// when they are first allocated. An internal temporary table's blocks are moreover the
    /// running thread's, as HEAP's thread-specific allocations are: the bytes move from the
    /// global count to the thread's (its Memory_used, PROCESSLIST's MEMORY_USED,
    /// max_session_mem_used), and back when the table shrinks or goes.
    pub fn account(&self, table: &Table) {
        if self.thr_lock.is_none() {
            let now = table.memory_bytes();
            let before = self.accounted.swap(now, Ordering::Relaxed);
            move_to_thread(now as i64 - before as i64);
        }
    }
}

/// Moves `delta` bytes of the server's memory accounting from the global count to the running
/// thread's (back when negative).
fn move_to_thread(delta: i64) {
    if delta != 0 {
        // SAFETY: no preconditions; the shim forwards to the server's accounting callback.
        unsafe {
            rheap_sys::shim::rheap_account_memory(delta, 1);
            rheap_sys::shim::rheap_account_memory(-delta, 0);
        }
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        status::sub(Counter::TablesLive, 1);
        move_to_thread(-(*self.accounted.get_mut() as i64));
    }
}
