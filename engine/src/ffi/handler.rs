//! The `handler` methods, one `extern "C"` function each, named after the method it serves:
//! each turns the server's pointers into slices and calls the method of the same name on the
//! core's [`rheap_core::handler::Handler`].
//!
//! Row buffers are in the server's record format and `rec_len` bytes long (`record[0]`,
//! `record[1]`); the engine copies rows in and out, so no pointer into engine memory is ever
//! handed to the server.

use super::definition::shape_of;
use super::tables::{ThrLock, TABLES};
use super::{guard, guard_value, table_name};
use crate::error::{Error, Result};
use rheap_core::catalog::live::Kind;
use rheap_core::catalog::share::Share;
use rheap_core::handler::HandlerScan;
use rheap_core::rows::records::Pos;
use rheap_core::table::Table;
use rheap_sys::shim::{rheap_handler, rheap_stats, rheap_table_def};
use std::ffi::{c_char, c_int, c_void};

/// The state of one `ha_rheap` object, in room the shim keeps for it.
pub type Handler = rheap_core::handler::Handler<ThrLock>;

/// Bytes of a position (`handler::ref_length`).
const REF_LENGTH: usize = std::mem::size_of::<Pos>();

/// # Safety
/// `h` must be NULL or hold a state from [`rheap_handler_init`] not yet dropped, used by one
/// thread at a time (the server never shares a handler object between threads).
pub(super) unsafe fn state<'a>(h: *mut rheap_handler) -> Result<&'a mut Handler> {
    // SAFETY: by the contract above the pointer is a live, unaliased Handler.
    unsafe { h.cast::<Handler>().as_mut() }
        .ok_or_else(|| Error::internal("no handler state (a NULL handler)"))
}

/// # Safety
/// `buf` must be valid for reads of `len` bytes for the returned lifetime.
pub(super) unsafe fn row<'a>(buf: *const u8, len: usize) -> Result<&'a [u8]> {
    if buf.is_null() {
        return Err(Error::WrongCommand);
    }
    // SAFETY: non-null and readable for `len` bytes by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(buf, len) })
}

/// # Safety
/// `buf` must be valid for writes of `len` bytes for the returned lifetime.
pub(super) unsafe fn row_mut<'a>(buf: *mut u8, len: usize) -> Result<&'a mut [u8]> {
    if buf.is_null() {
        return Err(Error::WrongCommand);
    }
    // SAFETY: non-null and writable for `len` bytes by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(buf, len) })
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// # Safety
/// `def` as [`super::definition::table_def`] requires.
unsafe fn new_table(def: &rheap_table_def) -> Result<Table> {
    // SAFETY: passed on from the caller.
    let def_core = unsafe { super::definition::table_def(def) }?;
    // Nothing shows an internal table's creation time: no clock read for one per statement.
    let created = if def.internal != 0 { 0 } else { now() };
    Table::try_new(def_core, created)
}

/// A new named table `name` (its path, which the list of live tables shows).
///
/// # Safety
/// As [`new_table`].
unsafe fn new_share(name: &str, def: &rheap_table_def) -> Result<Share<ThrLock>> {
    // SAFETY: passed on from the caller.
    let table = unsafe { new_table(def) }?;
    let share = Share::new(table, ThrLock::new()?, def.for_memory != 0);
    share.describe(name, Some((Kind::Table, 0)));
    Ok(share)
}

/// Opens (creating it if need be) the named table `name`: out of line, so that an open of an
/// internal table does not reserve the stack a table is built in.
///
/// # Safety
/// `name` a NUL-terminated string; `def` as [`new_table`].
#[inline(never)]
unsafe fn open_shared(h: &mut Handler, name: *const c_char, def: &rheap_table_def) -> Result<bool> {
    // SAFETY: passed on from the caller.
    let name = unsafe { table_name(name) }?;
    // SAFETY: as above.
    let (share, created) = TABLES.open(name, || unsafe { new_share(name, def) })?;
    // What the table is shows only once it is open (a table being created always looks
    // temporary to the engine): a TEMPORARY table is its connection's.
    if def.tmp_table != 0 {
        share.describe(name, Some((Kind::Temporary, def.connection)));
    }
    h.open_shared(share, def.tmp_table != 0)?;
    Ok(created)
}

// The shim keeps a handler's state in its own object, in room the header sizes.
const _: () = {
    use rheap_sys::shim::{RHEAP_HANDLER_ALIGN, RHEAP_HANDLER_SIZE, RHEAP_REF_LENGTH};
    assert!(std::mem::size_of::<Handler>() <= RHEAP_HANDLER_SIZE as usize);
    assert!(std::mem::align_of::<Handler>() <= RHEAP_HANDLER_ALIGN as usize);
    assert!(REF_LENGTH == RHEAP_REF_LENGTH as usize);
};

/// Makes a new handler state in the shim's room for it.
///
/// # Safety
/// `h` must be NULL or valid for writes of `RHEAP_HANDLER_SIZE` bytes, aligned to
/// `RHEAP_HANDLER_ALIGN`, and hold no state (a state it held is then leaked, not dropped).
#[no_mangle]
pub unsafe extern "C" fn rheap_handler_init(h: *mut rheap_handler) {
    guard_value("rheap_handler_init", (), || {
        if !h.is_null() {
            // SAFETY: by the contract, room for a Handler (the sizes are checked above).
            unsafe { h.cast::<Handler>().write(Handler::default()) };
        }
        Ok(())
    })
}

/// Ends the handler state in `h`.
///
/// # Safety
/// `h` must be NULL or hold a state from [`rheap_handler_init`], dropped only once.
#[no_mangle]
pub unsafe extern "C" fn rheap_handler_drop(h: *mut rheap_handler) {
    guard_value("rheap_handler_drop", (), || {
        if !h.is_null() {
            // SAFETY: by the contract, a live Handler, dropped once.
            unsafe { h.cast::<Handler>().drop_in_place() };
        }
        Ok(())
    })
}

/// `handler::table_flags` of a handler of `kind` (`RHEAP_KIND_*`): HEAP's capabilities; RHEAP
/// tables also take BLOBs, which MEMORY's tables keep refusing, except the information_schema
/// tables rheap holds for the server in MEMORY's name and the internal tables it holds in
/// Aria's place (they have BLOBs by definition).
#[no_mangle]
pub extern "C" fn rheap_table_flags(kind: u8) -> u64 {
    use rheap_sys::*;
    let blobs = if u32::from(kind) == rheap_sys::shim::RHEAP_KIND_MEMORY {
        HA_NO_BLOBS
    } else {
        HA_CAN_GEOMETRY
    };
    blobs
        | HA_FAST_KEY_READ
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
        // SAFETY: the shim passes its handler and pointers to its locals.
        let (h, def) = unsafe { (state(h)?, &*def) };
        let created = if def.internal != 0 {
            // SAFETY: the shim's definition is valid during this call.
            let key = unsafe { shape_of(def) };
            // SAFETY: as above.
            // SAFETY: the shim passes the table path.
            let whose = (unsafe { table_name(name) }?, def.connection);
            // SAFETY: as above.
            h.open_internal(key, def.tmp_table != 0, whose, || unsafe { new_table(def) })?;
            true
        } else {
            // SAFETY: the shim passes the table path; the definition as above.
            unsafe { open_shared(h, name, def) }?
        };
        // SAFETY: out-pointers to the shim's locals.
        unsafe {
            *thr_lock = h.lock().map_or(std::ptr::null_mut(), ThrLock::as_ptr);
            *implicit_emptied = u8::from(created && def.internal == 0);
        }
        Ok(())
    })
}

/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_close(h: *mut rheap_handler) -> c_int {
    guard("rheap_close", || {
        // SAFETY: the shim passes its own handler.
        unsafe { state(h) }?.close();
        Ok(())
    })
}

/// Keeps the BLOB bytes of the row last read where they are while the handler lives
/// ([`rheap_core::handler::Handler::hold_row_blobs`]): the move to Aria reads every row.
///
/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_hold_row_blobs(h: *mut rheap_handler) -> c_int {
    guard("rheap_hold_row_blobs", || {
        // SAFETY: the shim passes its own handler.
        unsafe { state(h) }?.hold_row_blobs();
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
        // SAFETY: the shim's definition is valid during this call.
        TABLES.create(name, || unsafe { new_share(name, def) })?;
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
        // SAFETY: the server passes a whole record of the open table, rec_len bytes, whose BLOB
        // pointers are valid for the duration of the call.
        unsafe { h.write_row(row(buf, h.rec_len())?) }
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
        // SAFETY: as in write_row (the new record's BLOB pointers may point into the handler's
        // BLOB buffer, which the update only reads).
        unsafe { h.update_row(row(new_data, h.rec_len())?) }
    })
}

/// `handler::delete_row`: deletes the row last read; a scan in progress goes on after it.
///
/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_delete_row(h: *mut rheap_handler, _buf: *const u8) -> c_int {
    // SAFETY: the shim passes its own handler.
    guard("rheap_delete_row", || unsafe { state(h) }?.delete_row())
}

/// `handler::delete_all_rows`.
///
/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_delete_all_rows(h: *mut rheap_handler) -> c_int {
    guard("rheap_delete_all_rows", || {
        // SAFETY: the shim passes its own handler.
        unsafe { state(h) }?.delete_all_rows()
    })
}

/// `handler::rnd_init`.
///
/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_rnd_init(h: *mut rheap_handler, _scan: u8) -> c_int {
    // SAFETY: the shim passes its own handler.
    guard("rheap_rnd_init", || unsafe { state(h) }?.rnd_init())
}

/// `handler::rnd_next`: the next slot's row, `HA_ERR_RECORD_DELETED` for a freed slot (the
/// server reads on, counting it in `Handler_read_rnd_deleted`), or `HA_ERR_END_OF_FILE`.
///
/// # Safety
/// `h` as for [`state`]; `buf` writable for a record of the open table.
#[no_mangle]
pub unsafe extern "C" fn rheap_rnd_next(h: *mut rheap_handler, buf: *mut u8) -> c_int {
    guard("rheap_rnd_next", || {
        // SAFETY: the shim passes its own handler.
        let h = unsafe { state(h) }?;
        // SAFETY: the server passes record[0] (or record[1]) of the open table, rec_len bytes.
        h.rnd_next(unsafe { row_mut(buf, h.rec_len()) }?)
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
        let out = unsafe { row_mut(buf, h.rec_len()) }?;
        let pos = Pos::from_le_bytes(
            // SAFETY: a position stored by rheap_position, ref_length (REF_LENGTH) bytes.
            unsafe { row(pos, REF_LENGTH) }?
                .try_into()
                .expect("REF_LENGTH bytes"),
        );
        h.rnd_pos(out, pos)
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
        out.copy_from_slice(&h.position().to_le_bytes());
        Ok(())
    })
}

/// Aria's `dup_ref`: the position of the row a unique constraint last refused a write or update
/// for, into `r` (as [`rheap_position`] writes one).
///
/// # Safety
/// `h` as for [`state`]; `r` writable for `REF_LENGTH` bytes.
#[no_mangle]
pub unsafe extern "C" fn rheap_dup_position(h: *mut rheap_handler, r: *mut u8) {
    guard_value("rheap_dup_position", (), || {
        // SAFETY: the shim passes its own handler.
        let h = unsafe { state(h) }?;
        // SAFETY: the shim passes handler::dup_ref, ref_length (REF_LENGTH) bytes.
        let out = unsafe { row_mut(r, REF_LENGTH) }?;
        out.copy_from_slice(&h.dup_position().to_le_bytes());
        Ok(())
    })
}

/// An internal table in Aria's place passed its limit and moved to Aria
/// (`Rheap_aria_tables_moved`).
#[no_mangle]
pub extern "C" fn rheap_note_moved_to_aria() {
    guard_value("rheap_note_moved_to_aria", (), || {
        rheap_core::status::add(rheap_core::status::Counter::AriaTablesMoved, 1);
        Ok(())
    })
}

/// `handler::info`. When the key statistics are due, also the HASH keys' rows-per-key, into
/// `rec_per_key` (`nkeys` entries, 0 for "leave alone").
///
/// # Safety
/// `h` as for [`state`]; `out` a valid pointer; `rec_per_key` writable for `nkeys` entries.
#[no_mangle]
pub unsafe extern "C" fn rheap_info(
    h: *mut rheap_handler,
    _flag: u32,
    out: *mut rheap_stats,
    rec_per_key: *mut u64,
    nkeys: u32,
) -> c_int {
    guard("rheap_info", || {
        // SAFETY: the shim's handler and a pointer to its local.
        let (h, out) = unsafe { (state(h)?, &mut *out) };
        let rpk: &mut [u64] = if nkeys == 0 {
            &mut []
        } else if rec_per_key.is_null() {
            if h.key_stats_due()? {
                return Err(Error::WrongCommand);
            }
            &mut []
        } else {
            // SAFETY: non-null, and the shim passes an array of nkeys entries.
            unsafe { std::slice::from_raw_parts_mut(rec_per_key, nkeys as usize) }
        };
        let info = h.info(rpk)?;
        let s = info.stats;
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
            errkey: info.errkey,
            key_stats_updated: u8::from(info.key_stats_updated),
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
    // SAFETY: the shim passes its own handler.
    guard_value("rheap_records", 0, || unsafe { state(h) }?.records())
}

/// `handler::remember_rnd_pos`: saves the current row for [`rheap_restart_rnd_next`].
///
/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_remember_rnd_pos(h: *mut rheap_handler) -> c_int {
    guard("rheap_remember_rnd_pos", || {
        // SAFETY: the shim passes its own handler.
        unsafe { state(h) }?.remember_rnd_pos()
    })
}

/// `handler::restart_rnd_next`: reads the remembered row again; the scan goes on after it.
///
/// # Safety
/// `h` as for [`state`]; `buf` writable for a record of the open table.
#[no_mangle]
pub unsafe extern "C" fn rheap_restart_rnd_next(h: *mut rheap_handler, buf: *mut u8) -> c_int {
    guard("rheap_restart_rnd_next", || {
        // SAFETY: the shim passes its own handler.
        let h = unsafe { state(h) }?;
        // SAFETY: the server passes a record buffer of the open table, rec_len bytes.
        h.restart_rnd_next(unsafe { row_mut(buf, h.rec_len()) }?)
    })
}

/// `handler::can_continue_handler_scan`: `mode` 1 for an index scan, 2 for a full scan.
///
/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_can_continue_handler_scan(h: *mut rheap_handler, mode: u8) -> c_int {
    let scan = match mode {
        1 => HandlerScan::Index,
        2 => HandlerScan::Full,
        _ => HandlerScan::Other,
    };
    guard("rheap_can_continue_handler_scan", || {
        // SAFETY: the shim passes its own handler.
        unsafe { state(h) }?.can_continue_handler_scan(scan)
    })
}

/// `handler::extra`: HA_EXTRA_CHANGE_KEY_TO_UNIQUE / _TO_DUP make every key unique or not;
/// HA_EXTRA_RESET_STATE forgets the cursor. Other hints need nothing.
///
/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_extra(h: *mut rheap_handler, operation: i32) -> c_int {
    use rheap_sys::{
        ha_extra_function_HA_EXTRA_CHANGE_KEY_TO_DUP as TO_DUP,
        ha_extra_function_HA_EXTRA_CHANGE_KEY_TO_UNIQUE as TO_UNIQUE,
        ha_extra_function_HA_EXTRA_RESET_STATE as RESET_STATE,
    };
    // Most calls are hints it ignores (a scan's HA_EXTRA_CACHE and HA_EXTRA_NO_CACHE, ...):
    // answered before the entry point's guard.
    if !matches!(operation as u32, TO_UNIQUE | TO_DUP | RESET_STATE) {
        return 0;
    }
    guard("rheap_extra", || {
        // SAFETY: the shim passes its own handler.
        let h = unsafe { state(h) }?;
        if operation as u32 == RESET_STATE {
            h.reset_state();
            Ok(())
        } else {
            h.set_all_keys_unique(operation as u32 == TO_UNIQUE)
        }
    })
}

/// `handler::reset`: the end of a statement.
///
/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_reset(h: *mut rheap_handler) -> c_int {
    guard("rheap_reset", || {
        // SAFETY: the shim passes its own handler.
        unsafe { state(h) }?.reset();
        Ok(())
    })
}

/// Runs `f` on the open table, for the table-wide handler methods.
///
/// # Safety
/// `h` as for [`state`].
unsafe fn with_table<T>(
    h: *mut rheap_handler,
    f: impl FnOnce(&mut Table) -> Result<T>,
) -> Result<T> {
    // SAFETY: passed on from the caller.
    unsafe { state(h) }?.with_table(f)
}

/// `handler::disable_indexes` (not persistent).
///
/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_disable_indexes(h: *mut rheap_handler) -> c_int {
    // SAFETY: the shim passes its own handler.
    guard("rheap_disable_indexes", || unsafe {
        with_table(h, |t| {
            t.disable_indexes();
            Ok(())
        })
    })
}

/// `handler::enable_indexes` (not persistent): HA_ERR_CRASHED unless the table is empty.
///
/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_enable_indexes(h: *mut rheap_handler) -> c_int {
    // SAFETY: the shim passes its own handler.
    guard("rheap_enable_indexes", || unsafe {
        with_table(h, |t| t.enable_indexes())
    })
}

/// `handler::indexes_are_disabled`: 1 when DISABLE KEYS is in effect.
///
/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_indexes_are_disabled(h: *mut rheap_handler) -> c_int {
    // SAFETY: the shim passes its own handler.
    guard_value("rheap_indexes_are_disabled", 0, || unsafe {
        with_table(h, |t| Ok(c_int::from(t.indexes_disabled())))
    })
}

/// `handler::reset_auto_increment`: the highest value used becomes `value`.
///
/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_reset_auto_increment(h: *mut rheap_handler, value: u64) -> c_int {
    // SAFETY: the shim passes its own handler.
    guard("rheap_reset_auto_increment", || unsafe {
        with_table(h, |t| {
            t.reset_auto_increment(value);
            Ok(())
        })
    })
}

/// The next AUTO_INCREMENT value, for `handler::get_auto_increment`.
///
/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_next_auto_increment(h: *mut rheap_handler) -> u64 {
    // SAFETY: the shim passes its own handler.
    guard_value("rheap_next_auto_increment", u64::MAX, || unsafe {
        with_table(h, |t| Ok(t.next_auto_increment()))
    })
}
