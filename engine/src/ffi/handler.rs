//! The `handler` methods, one `extern "C"` function each, named after the method it serves.
//!
//! Row buffers are in the server's record format and `rec_len` bytes long (`record[0]`,
//! `record[1]`); the engine copies rows in and out, so no pointer into engine memory is ever
//! handed to the server.

use super::share::{Share, TABLES};
use super::{guard, guard_value, table_name};
use crate::error::{Error, Result};
use crate::records::Pos;
use crate::table::{Table, TableDef};
use rheap_sys::shim::{rheap_handler, rheap_stats, rheap_table_def};
use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

/// The Rust state of one `ha_rheap` object.
#[derive(Debug, Default)]
pub struct Handler {
    share: Option<Arc<Share>>,
    rec_len: usize,
    /// The slot a scan looks at next.
    scan_next: Pos,
    /// The slot of the row last read: what update_row, delete_row and position act on.
    current: Option<Pos>,
}

impl Handler {
    fn share(&self) -> Result<&Arc<Share>> {
        self.share.as_ref().ok_or(Error::WrongCommand)
    }

    fn current(&self) -> Result<Pos> {
        self.current.ok_or(Error::WrongCommand)
    }
}

/// Bytes of a position (`handler::ref_length`).
const REF_LENGTH: usize = std::mem::size_of::<Pos>();

/// # Safety
/// `h` must be NULL or a pointer from [`rheap_handler_new`] not yet freed, used by one thread
/// at a time (the server never shares a handler object between threads).
unsafe fn state<'a>(h: *mut rheap_handler) -> Result<&'a mut Handler> {
    // SAFETY: by the contract above the pointer is a live, unaliased Box<Handler>.
    unsafe { h.cast::<Handler>().as_mut() }.ok_or(Error::OutOfMemory)
}

/// # Safety
/// `buf` must be valid for reads of `len` bytes for the returned lifetime.
unsafe fn row<'a>(buf: *const u8, len: usize) -> Result<&'a [u8]> {
    if buf.is_null() {
        return Err(Error::WrongCommand);
    }
    // SAFETY: non-null and readable for `len` bytes by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(buf, len) })
}

/// # Safety
/// `buf` must be valid for writes of `len` bytes for the returned lifetime.
unsafe fn row_mut<'a>(buf: *mut u8, len: usize) -> Result<&'a mut [u8]> {
    if buf.is_null() {
        return Err(Error::WrongCommand);
    }
    // SAFETY: non-null and writable for `len` bytes by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(buf, len) })
}

fn table_def(def: &rheap_table_def) -> TableDef {
    TableDef {
        rec_len: def.reclength as usize,
        max_rows: def.max_rows,
        min_rows: def.min_rows,
        max_table_size: def.max_table_size,
        auto_increment: def.auto_increment,
    }
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn new_share(def: &rheap_table_def) -> Result<Share> {
    Share::new(Table::new(table_def(def), now()), def.internal == 0)
}

#[no_mangle]
pub extern "C" fn rheap_handler_new() -> *mut rheap_handler {
    guard_value("rheap_handler_new", std::ptr::null_mut(), || {
        Ok(Box::into_raw(Box::new(Handler::default())).cast())
    })
}

/// # Safety
/// `h` must be NULL or a pointer from [`rheap_handler_new`], freed only once.
#[no_mangle]
pub unsafe extern "C" fn rheap_handler_free(h: *mut rheap_handler) {
    guard_value("rheap_handler_free", (), || {
        if !h.is_null() {
            // SAFETY: by the contract, a Box<Handler> from rheap_handler_new, freed once.
            drop(unsafe { Box::from_raw(h.cast::<Handler>()) });
        }
        Ok(())
    })
}

/// `handler::table_flags`: HEAP's capabilities, less what rheap does not do yet.
#[no_mangle]
pub extern "C" fn rheap_table_flags() -> u64 {
    use rheap_sys::*;
    HA_FAST_KEY_READ
        | HA_NO_BLOBS
        | HA_NULL_IN_KEY
        | HA_BINLOG_ROW_CAPABLE
        | HA_BINLOG_STMT_CAPABLE
        | HA_CAN_SQL_HANDLER
        | HA_CAN_ONLINE_BACKUPS
        | HA_REC_NOT_IN_SEQ
        | HA_CAN_INSERT_DELAYED
        | HA_NO_TRANSACTIONS
        | HA_HAS_RECORDS
        | HA_STATS_RECORDS_IS_EXACT
        | HA_CAN_HASH_KEYS
}

#[no_mangle]
pub extern "C" fn rheap_ref_length() -> u32 {
    REF_LENGTH as u32
}

/// `handler::open`.
///
/// # Safety
/// `h` as for [`state`]; `name` a NUL-terminated string; `def`, `thr_lock` and
/// `implicit_emptied` valid pointers.
#[no_mangle]
pub unsafe extern "C" fn rheap_open(
    h: *mut rheap_handler,
    name: *const c_char,
    def: *const rheap_table_def,
    thr_lock: *mut *mut c_void,
    implicit_emptied: *mut u8,
) -> c_int {
    guard("rheap_open", || {
        // SAFETY: the shim passes its handler, the table path and pointers to its locals.
        let (h, name, def) = unsafe { (state(h)?, table_name(name)?, &*def) };
        let (share, created) = if def.internal != 0 {
            (Arc::new(new_share(def)?), true)
        } else {
            TABLES.open(name, || new_share(def))?
        };
        h.rec_len = share.read()?.def().rec_len;
        // SAFETY: out-pointers to the shim's locals.
        unsafe {
            *thr_lock = share
                .thr_lock
                .as_ref()
                .map_or(std::ptr::null_mut(), |l| l.as_ptr());
            *implicit_emptied = u8::from(created && def.internal == 0);
        }
        h.share = Some(share);
        h.current = None;
        Ok(())
    })
}

/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_close(h: *mut rheap_handler) -> c_int {
    guard("rheap_close", || {
        // SAFETY: the shim passes its own handler.
        let h = unsafe { state(h) }?;
        h.share = None;
        h.current = None;
        Ok(())
    })
}

/// `handler::create`: a new empty table (an existing one nobody has open is replaced).
///
/// # Safety
/// `h` as for [`state`]; `name` a NUL-terminated string; `def` a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn rheap_create(
    h: *mut rheap_handler,
    name: *const c_char,
    def: *const rheap_table_def,
) -> c_int {
    guard("rheap_create", || {
        // SAFETY: the shim passes its handler, the table path and a pointer to its local.
        let (_, name, def) = unsafe { (state(h)?, table_name(name)?, &*def) };
        TABLES.create(name, || new_share(def))?;
        Ok(())
    })
}

/// `handler::write_row`.
///
/// # Safety
/// `h` as for [`state`]; `buf` a record of the open table.
#[no_mangle]
pub unsafe extern "C" fn rheap_write_row(h: *mut rheap_handler, buf: *const u8) -> c_int {
    guard("rheap_write_row", || {
        // SAFETY: the shim passes its own handler.
        let h = unsafe { state(h) }?;
        // SAFETY: the server passes a whole record of the open table, rec_len bytes.
        let buf = unsafe { row(buf, h.rec_len) }?;
        h.share()?.write()?.write(buf)?;
        Ok(())
    })
}

/// `handler::update_row`: the row last read becomes `new_data`.
///
/// # Safety
/// `h` as for [`state`]; `new_data` a record of the open table.
#[no_mangle]
pub unsafe extern "C" fn rheap_update_row(
    h: *mut rheap_handler,
    _old_data: *const u8,
    new_data: *const u8,
) -> c_int {
    guard("rheap_update_row", || {
        // SAFETY: the shim passes its own handler.
        let h = unsafe { state(h) }?;
        // SAFETY: the server passes a whole record of the open table, rec_len bytes.
        let new_data = unsafe { row(new_data, h.rec_len) }?;
        h.share()?.write()?.update(h.current()?, new_data)
    })
}

/// `handler::delete_row`: deletes the row last read; a scan in progress goes on after it.
///
/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_delete_row(h: *mut rheap_handler, _buf: *const u8) -> c_int {
    guard("rheap_delete_row", || {
        // SAFETY: the shim passes its own handler.
        let h = unsafe { state(h) }?;
        h.share()?.write()?.delete(h.current()?)
    })
}

/// `handler::delete_all_rows`.
///
/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_delete_all_rows(h: *mut rheap_handler) -> c_int {
    guard("rheap_delete_all_rows", || {
        // SAFETY: the shim passes its own handler.
        let h = unsafe { state(h) }?;
        h.share()?.write()?.clear();
        h.current = None;
        Ok(())
    })
}

/// `handler::truncate`: as delete_all_rows (the server recreates the table for TRUNCATE TABLE
/// of a base table, since the engine is HTON_CAN_RECREATE).
///
/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_truncate(h: *mut rheap_handler) -> c_int {
    // SAFETY: same contract.
    unsafe { rheap_delete_all_rows(h) }
}

/// `handler::rnd_init`.
///
/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_rnd_init(h: *mut rheap_handler, _scan: u8) -> c_int {
    guard("rheap_rnd_init", || {
        // SAFETY: the shim passes its own handler.
        let h = unsafe { state(h) }?;
        h.share()?;
        h.scan_next = 0;
        h.current = None;
        Ok(())
    })
}

/// `handler::rnd_next`: the next row in slot order, or `HA_ERR_END_OF_FILE`.
///
/// # Safety
/// `h` as for [`state`]; `buf` writable for a record of the open table.
#[no_mangle]
pub unsafe extern "C" fn rheap_rnd_next(h: *mut rheap_handler, buf: *mut u8) -> c_int {
    guard("rheap_rnd_next", || {
        // SAFETY: the shim passes its own handler.
        let h = unsafe { state(h) }?;
        // SAFETY: the server passes record[0] (or record[1]) of the open table, rec_len bytes.
        let out = unsafe { row_mut(buf, h.rec_len) }?;
        let table = h.share()?.read()?;
        let pos = table.next(h.scan_next).ok_or(Error::EndOfFile)?;
        out.copy_from_slice(table.read(pos)?);
        drop(table);
        h.current = Some(pos);
        h.scan_next = pos + 1;
        Ok(())
    })
}

/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_rnd_end(h: *mut rheap_handler) -> c_int {
    guard("rheap_rnd_end", || {
        // SAFETY: the shim passes its own handler.
        unsafe { state(h) }?;
        Ok(())
    })
}

/// `handler::rnd_pos`: reads the row at a position from [`rheap_position`].
///
/// # Safety
/// `h` as for [`state`]; `buf` writable for a record; `pos` readable for `REF_LENGTH` bytes.
#[no_mangle]
pub unsafe extern "C" fn rheap_rnd_pos(
    h: *mut rheap_handler,
    buf: *mut u8,
    pos: *const u8,
) -> c_int {
    guard("rheap_rnd_pos", || {
        // SAFETY: the shim passes its own handler.
        let h = unsafe { state(h) }?;
        // SAFETY: the server passes a record buffer of the open table, rec_len bytes.
        let out = unsafe { row_mut(buf, h.rec_len) }?;
        let pos = Pos::from_le_bytes(
            // SAFETY: a position stored by rheap_position, ref_length (REF_LENGTH) bytes.
            unsafe { row(pos, REF_LENGTH) }?
                .try_into()
                .expect("REF_LENGTH bytes"),
        );
        out.copy_from_slice(h.share()?.read()?.read(pos)?);
        h.current = Some(pos);
        Ok(())
    })
}

/// `handler::position`: the current row's position, into `ref`.
///
/// # Safety
/// `h` as for [`state`]; `r` writable for `REF_LENGTH` bytes.
#[no_mangle]
pub unsafe extern "C" fn rheap_position(h: *mut rheap_handler, r: *mut u8) {
    guard_value("rheap_position", (), || {
        // SAFETY: the shim passes its own handler.
        let h = unsafe { state(h) }?;
        // SAFETY: the shim passes handler::ref, ref_length (REF_LENGTH) bytes.
        let out = unsafe { row_mut(r, REF_LENGTH) }?;
        out.copy_from_slice(&h.current()?.to_le_bytes());
        Ok(())
    })
}

/// `handler::info`.
///
/// # Safety
/// `h` as for [`state`]; `out` a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn rheap_info(
    h: *mut rheap_handler,
    _flag: u32,
    out: *mut rheap_stats,
) -> c_int {
    guard("rheap_info", || {
        // SAFETY: the shim's handler and a pointer to its local.
        let (h, out) = unsafe { (state(h)?, &mut *out) };
        let s = h.share()?.read()?.stats();
        *out = rheap_stats {
            records: s.records,
            deleted: s.deleted,
            data_file_length: s.data_length,
            index_file_length: s.index_length,
            max_data_file_length: s.max_data_length,
            delete_length: s.delete_length,
            auto_increment_value: s.auto_increment,
            mean_rec_length: s.rec_len,
            create_time: s.create_time,
        };
        Ok(())
    })
}

/// `handler::records`: the exact row count.
///
/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_records(h: *mut rheap_handler) -> u64 {
    guard_value("rheap_records", 0, || {
        // SAFETY: the shim passes its own handler.
        let h = unsafe { state(h) }?;
        Ok(h.share()?.read()?.records())
    })
}
