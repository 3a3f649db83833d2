//! Test builds only (feature `failpoints`): the plugin's heap allocator, which makes the
//! allocation [`system::fail_nth`] names fail (returns NULL), so that tests can prove every
//! allocation a handler call makes fails the statement and not the server.

use super::system;
use std::alloc::{GlobalAlloc, Layout, System};

/// The system allocator, but for the allocation the failpoint names.
#[derive(Debug)]
pub struct Failing;

// SAFETY: every method forwards to `System`, or returns NULL, which GlobalAlloc allows for
// alloc, alloc_zeroed and realloc (realloc then leaves the old block as it was).
unsafe impl GlobalAlloc for Failing {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !system::may_allocate() {
            return std::ptr::null_mut();
        }
        // SAFETY: passed on under the caller's contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !system::may_allocate() {
            return std::ptr::null_mut();
        }
        // SAFETY: passed on under the caller's contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: passed on under the caller's contract (the block came from System).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !system::may_allocate() {
            return std::ptr::null_mut();
        }
        // SAFETY: passed on under the caller's contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Failing = Failing;
