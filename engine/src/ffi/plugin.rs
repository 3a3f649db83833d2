//! Plugin life cycle and the handlerton's table-level entry points.

use super::tables::TABLES;
use super::{guard, guard_value, table_name, INTERNAL_ERROR};
use crate::error::Error;
use rheap_core::alloc::{cache, system};
use rheap_core::status;
use std::ffi::{c_char, c_int};

/// Plugin init (`st_maria_plugin::init`): blocks come from the server's allocator from now on.
#[no_mangle]
pub extern "C" fn rheap_plugin_init() -> c_int {
    guard("rheap_plugin_init", || {
        system::set_source(system::Source {
            alloc: rheap_sys::shim::rheap_block_alloc,
            free: rheap_sys::shim::rheap_block_free,
            move_to_thread: rheap_sys::shim::rheap_move_memory_to_thread,
        });
        Ok(())
    })
}

/// A status variable's value (`SHOW STATUS`): counter `i` in the shim's order
/// ([`status::Counter`]), 0 for an index out of range.
#[no_mangle]
pub extern "C" fn rheap_status_value(i: u32) -> u64 {
    guard_value("rheap_status_value", 0, || {
        Ok(status::Counter::from_index(i as usize).map_or(0, rheap_core::recycle::counter))
    })
}

// The shim has room for RHEAP_STATUS_MAX status variables.
const _: () = assert!(status::COUNTERS <= rheap_sys::shim::RHEAP_STATUS_MAX as usize);

/// How many status variables there are ([`status::COUNTERS`]).
#[no_mangle]
pub extern "C" fn rheap_status_count() -> u32 {
    status::COUNTERS as u32
}

/// The name of status variable `i` ([`status::Counter::name`]), NULL for an index out of
/// range: a NUL-terminated string that lives as long as the library.
#[no_mangle]
pub extern "C" fn rheap_status_name(i: u32) -> *const std::ffi::c_char {
    guard_value("rheap_status_name", std::ptr::null(), || {
        Ok(status::Counter::from_index(i as usize).map_or(std::ptr::null(), |c| c.name().as_ptr()))
    })
}

/// `rheap_block_cache_size` was set (and at init). Kept tables go first, so that the blocks
/// they kept are the cache's to free too.
#[no_mangle]
pub extern "C" fn rheap_set_block_cache_size(bytes: u64) {
    guard_value("rheap_set_block_cache_size", (), || {
        rheap_core::recycle::release_all();
        cache::CACHE.set_limit(bytes);
        Ok(())
    })
}

/// `rheap_max_memory` was set (and at init): the server-wide budget
/// ([`rheap_core::alloc::budget`]).
#[no_mangle]
pub extern "C" fn rheap_set_max_memory(bytes: u64) {
    guard_value("rheap_set_max_memory", (), || {
        rheap_core::alloc::budget::set_limit(bytes);
        Ok(())
    })
}

/// `rheap_debug_fail_alloc_after` was set (test builds only, feature `failpoints`): block
/// allocation fails after `n` more blocks, server-wide; negative: never.
#[cfg(feature = "failpoints")]
#[no_mangle]
pub extern "C" fn rheap_debug_fail_alloc_after(n: i64) {
    guard_value("rheap_debug_fail_alloc_after", (), || {
        system::fail_after(u64::try_from(n).ok());
        Ok(())
    })
}

/// `rheap_debug_fail_nth_alloc` was set (test builds only, feature `failpoints`): the `n`th
/// allocation of any kind from now fails, once; 0 or negative: none.
#[cfg(feature = "failpoints")]
#[no_mangle]
pub extern "C" fn rheap_debug_fail_nth_alloc(n: i64) {
    guard_value("rheap_debug_fail_nth_alloc", (), || {
        system::fail_nth(u64::try_from(n).ok());
        Ok(())
    })
}

/// Plugin deinit: the server unloads the plugin only when no handler of ours is left, so
/// every table still here is one nobody has open. MEMORY tables do not survive their engine.
/// The names of the MEMORY tables left to HEAP go too: after an INSTALL, opening such a table
/// names it again before anything could recreate it (TRUNCATE opens it first).
#[no_mangle]
pub extern "C" fn rheap_plugin_deinit() -> c_int {
    guard("rheap_plugin_deinit", || {
        // Everything the plugin holds goes back to the server's allocator: what its statics
        // kept would still count in the server's Memory_used when it checks at exit.
        TABLES.clear();
        rheap_core::recycle::release_all();
        cache::CACHE.release_all();
        super::takeover::forget_heap_names();
        rheap_core::catalog::live::shrink();
        rheap_core::index::rows::release_scratch();
        Ok(())
    })
}

/// `hton->drop_table` and `handler::delete_table`: 0 dropped, -1 when there is no such table,
/// so that the server reports "Unknown table" (and tries the other engines) exactly as it does
/// for MEMORY.
///
/// # Safety
/// `name` must be a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn rheap_drop_table(name: *const c_char) -> c_int {
    guard_value("rheap_drop_table", INTERNAL_ERROR, || {
        // SAFETY: the server passes a NUL-terminated path that lives for the call.
        let name = unsafe { table_name(name) }?;
        Ok(match TABLES.drop_table(name) {
            Ok(()) => 0,
            Err(Error::NoSuchTable) => -1,
            Err(e) => crate::error::ha_err(&e),
        })
    })
}

/// `handler::rename_table`.
///
/// # Safety
/// `from` and `to` must be NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn rheap_rename_table(from: *const c_char, to: *const c_char) -> c_int {
    guard("rheap_rename_table", || {
        // SAFETY: the server passes NUL-terminated paths that live for the call.
        let (from, to) = unsafe { (table_name(from)?, table_name(to)?) };
        TABLES.rename(from, to)?;
        if let Some(share) = TABLES.get(to) {
            share.describe(to, None);
        }
        Ok(())
    })
}
