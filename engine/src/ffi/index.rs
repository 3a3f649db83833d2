//! The index methods of `handler`, one `extern "C"` function each: reads by key, scans in key
//! order, range estimates.
//!
//! A HASH key answers whole-key lookups only, returning rows with equal keys newest first (as
//! HEAP's hash chains do); a BTREE key also scans in key order from any point. The cursor of a
//! scan is a position in the index (key image and row), so deleting the current row does not
//! lose the scan's place.

use super::handler::{row, row_mut, state, Cursor, Handler, State};
use super::{guard, guard_value};
use crate::error::{Error, Result};
use crate::index::{Entry, EntryRef, Find, Index, RangeEnd};
use crate::records::Pos;
use crate::table::Table;
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

/// Copies row `pos` into `out` and makes it the current row.
#[inline(always)]
fn land(h: &mut State, table: &Table, out: &mut [u8], pos: Pos) -> Result<()> {
    table.read_into(pos, out, &mut h.blobs)?;
    h.current = Some(pos);
    Ok(())
}

/// Reads by key: the row `find_flag` names for the first parts (`keypart_map`) of `key`.
///
/// # Safety
/// `h` as for `state`; `buf` writable for a record; `key` readable for the key format of the
/// parts in `keypart_map`.
#[link_section = ".text.hot.rheap.index.read_map"]
unsafe fn read_map(
    h: &mut Handler,
    buf: *mut u8,
    index: u32,
    key: *const u8,
    keypart_map: u64,
    find_flag: i32,
) -> Result<()> {
    // SAFETY: the server passes a record buffer of the open table, rec_len bytes.
    let out = unsafe { row_mut(buf, h.rec_len) }?;
    let (open, h) = h.parts()?;
    // Until a row is found there is none (HEAP's position() then gives no row).
    h.current = None;
    let table = open.read()?;
    let k = index as usize;
    let (def, idx) = table.index(k)?;
    let parts = def.parts_in_map(keypart_map);
    // SAFETY: the server passes a key with at least the parts of keypart_map.
    let key = unsafe { row(key, def.key_format_len(parts)) }?;
    def.image_of_key_into(key, parts, &mut h.key)?;
    h.cursor_key = k;
    h.seen_key_version = table.key_version();
    let found = match idx {
        Index::Hash(hash) if parts == def.segs.len() => {
            let pos = hash.newest(&h.key.bytes);
            if let Some(pos) = pos {
                h.cursor = Cursor::Hash { pos, at: 0 };
            }
            pos
        }
        Index::Hash(_) => None,
        Index::Btree(tree) => match find_of(find_flag).and_then(|how| tree.find(&h.key.bytes, how))
        {
            Some(e) => {
                move_btree_cursor(&mut h.cursor, e)?;
                Some(e.1)
            }
            None => None,
        },
    };
    let Some(pos) = found else {
        h.cursor = match idx {
            Index::Btree(_) => Cursor::BtreeMissed,
            Index::Hash(_) => Cursor::None,
        };
        return Err(Error::KeyNotFound);
    };
    land(h, &table, out, pos)
}

/// Puts the cursor on `e`, reusing its image buffer when it already is on a BTREE entry.
fn move_btree_cursor(cursor: &mut Cursor, e: EntryRef<'_>) -> Result<()> {
    match cursor {
        Cursor::Btree { entry } => entry.set(e),
        _ => {
            *cursor = Cursor::Btree {
                entry: Entry::new(e)?,
            };
            Ok(())
        }
    }
}

/// `handler::index_read_map` (and `index_read_idx_map`, which names its key).
///
/// # Safety
/// `h` as for `state`; `buf` writable for a record; `key` a key of `index` in key format.
#[no_mangle]
#[link_section = ".text.hot.rheap.index.rheap_index_read_map"]
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
        unsafe { read_map(state(h)?, buf, index, key, keypart_map, find_flag) }
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
        unsafe { read_map(state(h)?, buf, index, key, keypart_map, flag) }
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
    let out = unsafe { row_mut(buf, h.rec_len) }?;
    let (open, h) = h.parts()?;
    // Until a row is found there is none (HEAP's position() then gives no row).
    h.current = None;
    let table = open.read()?;
    let (_, idx) = table.index(h.cursor_key)?;
    // The cursor moves in place; `replace` is a cursor of another kind to take its place.
    let mut replace = None;
    let pos = match (&mut h.cursor, idx) {
        (Cursor::Hash { pos, at }, Index::Hash(hash)) if forward => {
            hash.next_after(&h.key.bytes, *pos, *at).map(|(p, i)| {
                (*pos, *at) = (p, i);
                p
            })
        }
        (Cursor::Btree { entry }, Index::Btree(tree)) => {
            let e = if forward {
                tree.next(entry.as_ref())
            } else {
                tree.prev(entry.as_ref())
            };
            match e {
                Some(e) => {
                    entry.set(e)?;
                    Some(e.1)
                }
                None => {
                    replace = Some(Cursor::BtreeEdge { after: forward });
                    None
                }
            }
        }
        (Cursor::BtreeMissed, Index::Btree(tree)) => {
            let how = if forward {
                Find::KeyOrNext
            } else {
                Find::BeforeKey
            };
            match tree.find(&h.key.bytes, how) {
                Some(e) => {
                    replace = Some(Cursor::Btree {
                        entry: Entry::new(e)?,
                    });
                    Some(e.1)
                }
                None => {
                    replace = Some(Cursor::BtreeEdge { after: forward });
                    None
                }
            }
        }
        (Cursor::BtreeEdge { after }, Index::Btree(tree)) if *after != forward => {
            match if forward { tree.first() } else { tree.last() } {
                Some(e) => {
                    replace = Some(Cursor::Btree {
                        entry: Entry::new(e)?,
                    });
                    Some(e.1)
                }
                None => None,
            }
        }
        _ => None,
    };
    if let Some(c) = replace {
        h.cursor = c;
    }
    let pos = pos.ok_or(Error::EndOfFile)?;
    land(h, &table, out, pos)
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
    let out = unsafe { row_mut(buf, h.rec_len) }?;
    let (open, h) = h.parts()?;
    // Until a row is found there is none (HEAP's position() then gives no row).
    h.current = None;
    let table = open.read()?;
    let k = index as usize;
    let Index::Btree(tree) = table.index(k)?.1 else {
        return Err(Error::WrongCommand);
    };
    h.cursor_key = k;
    h.seen_key_version = table.key_version();
    let e = if first { tree.first() } else { tree.last() };
    let Some(e) = e else {
        h.cursor = Cursor::BtreeEdge { after: first };
        return Err(Error::EndOfFile);
    };
    move_btree_cursor(&mut h.cursor, e)?;
    land(h, &table, out, e.1)
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

/// A range bound's key image and search flag.
///
/// # Safety
/// `r` NULL or a valid bound whose key holds the parts of its keypart_map.
unsafe fn bound(
    def: &crate::key::KeyDef,
    r: *const rheap_key_range,
) -> Result<Option<(Vec<u8>, i32, u32)>> {
    // SAFETY: NULL or valid by the contract.
    let Some(r) = (unsafe { r.as_ref() }) else {
        return Ok(None);
    };
    let parts = def.parts_in_map(r.keypart_map);
    // SAFETY: the key holds the parts of its map.
    let key = unsafe { row(r.key, def.key_format_len(parts)) }?;
    Ok(Some((
        def.image_of_key(key, parts)?.bytes,
        r.flag,
        r.length,
    )))
}

/// A range bound as a [`RangeEnd`]: `including` / `excluding` are the search flags that keep
/// or leave out rows equal to the bound; Err for any other flag.
fn range_end(
    b: &Option<(Vec<u8>, i32, u32)>,
    including: i32,
    excluding: i32,
) -> std::result::Result<Option<RangeEnd<'_>>, ()> {
    match b {
        None => Ok(None),
        Some((img, f, _)) if *f == including => Ok(Some(RangeEnd::Including(img))),
        Some((img, f, _)) if *f == excluding => Ok(Some(RangeEnd::Excluding(img))),
        Some(_) => Err(()),
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
        let (open, h) = h.parts()?;
        let table = open.read()?;
        let k = index as usize;
        let (def, idx) = table.index(k)?;
        // SAFETY: the server's bounds of this key.
        let (lo, hi) = unsafe { (bound(def, min_key)?, bound(def, max_key)?) };
        let exact = F::HA_READ_KEY_EXACT as i32;
        let after = F::HA_READ_AFTER_KEY as i32;
        match idx {
            Index::Btree(tree) => {
                let before = F::HA_READ_BEFORE_KEY as i32;
                match (range_end(&lo, exact, after), range_end(&hi, after, before)) {
                    (Ok(min), Ok(max)) => Ok(tree.records_in_range(min, max)),
                    _ => Ok(u64::MAX),
                }
            }
            Index::Hash(_) => match (lo, hi) {
                (Some((_, lf, ll)), Some((_, hf, hl)))
                    if lf == exact && hf == after && ll == hl && ll as usize == def.key_length =>
                {
                    if h.stats_records <= 1 {
                        Ok(h.stats_records)
                    } else {
                        Ok(h.rec_per_key.get(k).copied().flatten().unwrap_or(2))
                    }
                }
                _ => Ok(u64::MAX),
            },
        }
    })
}

/// `handler::find_unique_row`: the row whose unique HASH key `index` equals `record`'s, copied
/// into `record`; 0 found, 1 not found, -1 on error.
///
/// # Safety
/// `h` as for `state`; `record` readable and writable for a record.
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
        let rec = unsafe { row_mut(record, h.rec_len) }?;
        let (open, h) = h.parts()?;
        let table = open.read()?;
        let k = index as usize;
        let (def, idx) = table.index(k)?;
        let Index::Hash(hash) = idx else {
            return Err(Error::WrongCommand);
        };
        def.image_of_record_into(rec, &mut h.key)?;
        let Some(pos) = hash.lookup(&h.key.bytes).next() else {
            return Ok(1);
        };
        h.cursor_key = k;
        h.cursor = Cursor::Hash { pos, at: 0 };
        land(h, &table, rec, pos)?;
        Ok(0)
    })
}
