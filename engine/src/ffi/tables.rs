//! The named tables of every connection, and the server's lock that each one carries.

use crate::error::{Error, Result};
use rheap_core::catalog::registry::Registry;
use rheap_core::catalog::share::Share;
use std::ffi::c_void;

/// Named tables of every connection.
pub static TABLES: Registry<Share<ThrLock>> = Registry::new();

/// The server's `THR_LOCK` for one shared table, allocated by the shim: it implements MEMORY's
/// table-level locking.
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
