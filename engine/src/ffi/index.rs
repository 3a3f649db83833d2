//! The index methods of `handler`, one `extern "C"` function each: reads by key, scans in key
//! order, range estimates. Each translates the server's arguments (search flags, key
//! pointers) and calls the method of the same name of [`rheap_core::handler::Handler`] (whose
//! cursor is [`rheap_core::handler::cursor`]).

use super::handler::{row, row_mut, state};
use super::{guard, guard_value};
use crate::error::Result;
use rheap_core::handler::cursor::{Bound, BoundFlag};
use rheap_core::index::Find;
use rheap_sys::ha_rkey_function as F;
use rheap_sys::shim::{rheap_handler, rheap_key_range};
use std::ffi::c_int;

/// `handler::index_flags`: HEAP's capabilities per index kind.
#[no_mangle]
pub extern "C" fn rheap_index_flags(btree: u8) -> u64 {
    use rheap_sys::*;
    if btree != 0 {
        HA_READ_NEXT | HA_READ_PREV | HA_READ_ORDER | HA_READ_RANGE
    } else {
        HA_ONLY_WHOLE_INDEX | HA_KEY_SCAN_NOT_ROR
    }
}

/// The search a `ha_rkey_function` asks for on a BTREE key (None for the ones HEAP lacks).
fn find_of(flag: i32) -> Option<Find> {
    let f = |x: F| x as i32;
    Some(match flag {
        x if x == f(F::HA_READ_KEY_EXACT) || x == f(F::HA_READ_PREFIX) => Find::Exact,
        x if x == f(F::HA_READ_KEY_OR_NEXT) => Find::KeyOrNext,
        x if x == f(F::HA_READ_KEY_OR_PREV) => Find::KeyOrPrev,
        x if x == f(F::HA_READ_AFTER_KEY) => Find::AfterKey,
        x if x == f(F::HA_READ_BEFORE_KEY) => Find::BeforeKey,
        x if x == f(F::HA_READ_PREFIX_LAST) => Find::PrefixLast,
        x if x == f(F::HA_READ_PREFIX_LAST_OR_PREV) => Find::PrefixLastOrPrev,
        _ => return None,
    })
}

/// Reads by key: the row `find_flag` names for the first parts (`keypart_map`) of `key`.
///
/// # Safety
/// `h` as for `state`; `buf` writable for a record; `key` readable for the key format of the
/// parts in `keypart_map`.
unsafe fn read_map(
    h: *mut rheap_handler,
    buf: *mut u8,
    index: u32,
    key: *const u8,
    keypart_map: u64,
    find_flag: i32,
) -> Result<()> {
    // SAFETY: the shim passes its own handler.
    let h = unsafe { state(h) }?;
    // SAFETY: the server passes a record buffer of the open table, rec_len bytes.
    let out = unsafe { row_mut(buf, h.rec_len()) }?;
    let find = find_of(find_flag);
    // SAFETY: the server passes a key with at least the parts of keypart_map.
    h.index_read_map(out, index as usize, keypart_map, find, |len| unsafe {
        row(key, len)
    })
}

/// `handler::index_read_map` (and `index_read_idx_map`, which names its key).
///
/// # Safety
/// `h` as for `state`; `buf` writable for a record; `key` a key of `index` in key format.
#[no_mangle]
pub unsafe extern "C" fn rheap_index_read_map(
    h: *mut rheap_handler,
    buf: *mut u8,
    index: u32,
    key: *const u8,
    keypart_map: u64,
    find_flag: i32,
) -> c_int {
    guard("rheap_index_read_map", || {
        // SAFETY: the shim passes its own handler and the server's buffers.
        unsafe { read_map(h, buf, index, key, keypart_map, find_flag) }
    })
}

/// `handler::index_read_last_map`: the last row with the key prefix.
///
/// # Safety
/// As [`rheap_index_read_map`].
#[no_mangle]
pub unsafe extern "C" fn rheap_index_read_last_map(
    h: *mut rheap_handler,
    buf: *mut u8,
    index: u32,
    key: *const u8,
    keypart_map: u64,
) -> c_int {
    guard("rheap_index_read_last_map", || {
        let flag = F::HA_READ_PREFIX_LAST as i32;
        // SAFETY: the shim passes its own handler and the server's buffers.
        unsafe { read_map(h, buf, index, key, keypart_map, flag) }
    })
}

/// One step of an index scan, forwards or backwards.
///
/// # Safety
/// `h` as for `state`; `buf` writable for a record.
unsafe fn step(h: *mut rheap_handler, buf: *mut u8, forward: bool) -> Result<()> {
    // SAFETY: the shim passes its own handler.
    let h = unsafe { state(h) }?;
    // SAFETY: the server passes a record buffer of the open table, rec_len bytes.
    h.index_step(unsafe { row_mut(buf, h.rec_len()) }?, forward)
}

/// `handler::index_next`: the next row in key order (BTREE), or the next row with the same
/// key (HASH); `HA_ERR_END_OF_FILE` at the end.
///
/// # Safety
/// `h` as for `state`; `buf` writable for a record.
#[no_mangle]
pub unsafe extern "C" fn rheap_index_next(h: *mut rheap_handler, buf: *mut u8) -> c_int {
    // SAFETY: passed on from the shim.
    guard("rheap_index_next", || unsafe { step(h, buf, true) })
}

/// `handler::index_prev`: the previous row in key order (BTREE only).
///
/// # Safety
/// `h` as for `state`; `buf` writable for a record.
#[no_mangle]
pub unsafe extern "C" fn rheap_index_prev(h: *mut rheap_handler, buf: *mut u8) -> c_int {
    // SAFETY: passed on from the shim.
    guard("rheap_index_prev", || unsafe { step(h, buf, false) })
}

/// The first (or last) row of a BTREE key; HASH keys cannot be scanned in order.
///
/// # Safety
/// `h` as for `state`; `buf` writable for a record.
unsafe fn edge(h: *mut rheap_handler, buf: *mut u8, index: u32, first: bool) -> Result<()> {
    // SAFETY: the shim passes its own handler.
    let h = unsafe { state(h) }?;
    // SAFETY: the server passes a record buffer of the open table, rec_len bytes.
    h.index_edge(unsafe { row_mut(buf, h.rec_len()) }?, index as usize, first)
}

/// `handler::index_first`.
///
/// # Safety
/// `h` as for `state`; `buf` writable for a record.
#[no_mangle]
pub unsafe extern "C" fn rheap_index_first(
    h: *mut rheap_handler,
    buf: *mut u8,
    index: u32,
) -> c_int {
    // SAFETY: passed on from the shim.
    guard("rheap_index_first", || unsafe { edge(h, buf, index, true) })
}

/// `handler::index_last`.
///
/// # Safety
/// `h` as for `state`; `buf` writable for a record.
#[no_mangle]
pub unsafe extern "C" fn rheap_index_last(
    h: *mut rheap_handler,
    buf: *mut u8,
    index: u32,
) -> c_int {
    // SAFETY: passed on from the shim.
    guard("rheap_index_last", || unsafe { edge(h, buf, index, false) })
}

/// The search flag of a range bound.
fn bound_flag(flag: i32) -> BoundFlag {
    match flag {
        x if x == F::HA_READ_KEY_EXACT as i32 => BoundFlag::KeyExact,
        x if x == F::HA_READ_AFTER_KEY as i32 => BoundFlag::AfterKey,
        x if x == F::HA_READ_BEFORE_KEY as i32 => BoundFlag::BeforeKey,
        _ => BoundFlag::Other,
    }
}

/// `handler::records_in_range`: rows between two bounds. BTREE keys give MEMORY's estimate from
/// the tree; HASH keys answer only for one exact whole key, from the statistics of the last
/// `info()`; `u64::MAX` (HA_POS_ERROR) otherwise.
///
/// # Safety
/// `h` as for `state`; `min_key`, `max_key` NULL or valid bounds of key `index`.
#[no_mangle]
pub unsafe extern "C" fn rheap_records_in_range(
    h: *mut rheap_handler,
    index: u32,
    min_key: *const rheap_key_range,
    max_key: *const rheap_key_range,
) -> u64 {
    guard_value("rheap_records_in_range", u64::MAX, || {
        // SAFETY: the shim passes its own handler.
        let h = unsafe { state(h) }?;
        // SAFETY: NULL or the server's bounds of this key, each key holding the parts of its
        // map.
        let (min, max) = unsafe { (min_key.as_ref(), max_key.as_ref()) };
        // SAFETY: as above.
        let min_bytes = |len| unsafe { row(min.map_or(std::ptr::null(), |r| r.key), len) };
        // SAFETY: as above.
        let max_bytes = |len| unsafe { row(max.map_or(std::ptr::null(), |r| r.key), len) };
        let bound = |r: &rheap_key_range, key| Bound {
            keypart_map: r.keypart_map,
            flag: bound_flag(r.flag),
            length: r.length,
            key,
        };
        h.records_in_range(
            index as usize,
            min.map(|r| bound(r, &min_bytes)),
            max.map(|r| bound(r, &max_bytes)),
        )
    })
}

/// `handler::find_unique_row`: the row whose unique HASH key `index` equals `record`'s, copied
/// into `record`; 0 found, 1 not found, -1 on error.
///
/// # Safety
/// `h` as for `state`; `record` readable and writable for a record, its BLOB pointers valid
/// for their lengths.
#[no_mangle]
pub unsafe extern "C" fn rheap_find_unique_row(
    h: *mut rheap_handler,
    record: *mut u8,
    index: u32,
) -> c_int {
    guard_value("rheap_find_unique_row", -1, || {
        // SAFETY: the shim passes its own handler.
        let h = unsafe { state(h) }?;
        // SAFETY: the server passes record[0] of the open table.
        let rec = unsafe { row_mut(record, h.rec_len()) }?;
        // SAFETY: the server's record: its BLOB pointers are valid.
        Ok(if unsafe { h.find_unique_row(rec, index as usize) }? {
            0
        } else {
            1
        })
    })
}
