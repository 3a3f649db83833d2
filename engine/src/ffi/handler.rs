//! The `handler` methods, one `extern "C"` function each, named after the method it serves.
//!
//! Row buffers are in the server's record format and `rec_len` bytes long (`record[0]`,
//! `record[1]`); the engine copies rows in and out, so no pointer into engine memory is ever
//! handed to the server.

use super::definition::DefKey;
use super::recycle;
use super::share::{Internal, Open, Share, TABLES};
use super::{guard, guard_value, table_name};
use crate::error::{Error, Result};
use crate::index::Entry;
use crate::key::Image;
use crate::records::Pos;
use crate::status::{self, Counter};
use crate::table::Table;
use rheap_sys::shim::{rheap_handler, rheap_stats, rheap_table_def};
use std::ffi::{c_char, c_int, c_void};

/// Where an index scan stands.
#[derive(Debug, Default, Clone)]
pub(super) enum Cursor {
    #[default]
    None,
    /// On a row of a HASH key (whose image is the handler's `key`): the row, and how many
    /// rows of the key came before it.
    Hash { pos: Pos, at: usize },
    /// On an entry of a BTREE key.
    Btree { entry: Entry },
    /// Past the last (`after`) or before the first entry of a BTREE key.
    BtreeEdge { after: bool },
    /// Where a read of a BTREE key that found nothing left it (HEAP's `HA_STATE_NO_KEY` with
    /// no last position): the next row is the first at or after the key read (the handler's
    /// `key`), the previous one the last before it. (HEAP searches again from the key read:
    /// forwards as far as its parts go, backwards on the whole key's bytes and then the row's
    /// address, which the key read has as zeroes, so rows equal to it come after it.)
    BtreeMissed,
}

/// The Rust state of one `ha_rheap` object: the open table, and the rest ([`State`], which the
/// handler derefs to, so that a method can hold the table and change the rest at once).
#[derive(Debug, Default)]
pub struct Handler {
    open: Option<Open>,
    st: State,
}

/// What one `ha_rheap` object keeps besides its table.
#[derive(Debug, Default)]
pub struct State {
    pub(super) rec_len: usize,
    /// The slot a scan looks at next.
    scan_next: Pos,
    /// The slot of the row last read: what update_row, delete_row and position act on.
    pub(super) current: Option<Pos>,
    /// The row remember_rnd_pos saved.
    remembered: Option<Pos>,
    /// The index scan in progress, and the key it is on (for every kind of cursor).
    pub(super) cursor: Cursor,
    pub(super) cursor_key: usize,
    /// The image of the key last looked up: a HASH cursor's key (its buffer is reused, so a
    /// lookup per row, as GROUP BY makes, allocates nothing).
    pub(super) key: Image,
    /// The key of the last duplicate-key error.
    errkey: i32,
    /// A temporary table: deletes do not count towards refreshing statistics (as HEAP).
    tmp_table: bool,
    /// One of the server's internal temporary tables.
    internal: bool,
    /// Rows written to an internal table, not yet in `Rheap_rows_written`.
    rows_unreported: u64,
    /// A record being written, packed with its BLOBs.
    packed: Vec<u8>,
    /// The BLOB bytes of the record last read: the server reads them through the record's
    /// pointers until this handler reads another row (the old row of an UPDATE included,
    /// which the server keeps in record[1] while it writes the new one).
    pub(super) blobs: Vec<u8>,
    /// Rows changed through this handler since its statistics were last refreshed.
    records_changed: u64,
    /// The table's key_stat_version when this handler last refreshed its statistics.
    key_stat_version: u64,
    /// HASH keys' rows-per-key as last reported to the server, and the row count then.
    pub(super) rec_per_key: Vec<Option<u64>>,
    pub(super) stats_records: u64,
    /// The table's versions when this handler last positioned a scan (HANDLER statement).
    pub(super) seen_key_version: u64,
    seen_file_version: u64,
}

impl std::ops::Deref for Handler {
    type Target = State;
    fn deref(&self) -> &State {
        &self.st
    }
}

impl std::ops::DerefMut for Handler {
    fn deref_mut(&mut self) -> &mut State {
        &mut self.st
    }
}

impl Handler {
    /// The open table, and the rest of the handler.
    pub(super) fn parts(&mut self) -> Result<(&mut Open, &mut State)> {
        match &mut self.open {
            Some(open) => Ok((open, &mut self.st)),
            None => Err(Error::WrongCommand),
        }
    }
}

/// The buffers of a handler that an internal table keeps when it closes. A handler serves one
/// statement and a kept table many (`recycle`), so the next statement's handler starts with the
/// room this one made: a GROUP BY's key image and its keys' statistics, which would otherwise
/// be allocated and freed by every statement. Both are bounded by the table's keys.
#[derive(Debug, Default)]
pub struct Buffers {
    key: Image,
    rec_per_key: Vec<Option<u64>>,
}

impl State {
    /// Takes over the buffers the table's previous handler left.
    fn adopt(&mut self, b: Buffers) {
        self.key = b.key;
        self.rec_per_key = b.rec_per_key;
    }

    /// The buffers to leave with the table, for its next handler.
    fn leave(&mut self) -> Buffers {
        Buffers {
            key: std::mem::take(&mut self.key),
            rec_per_key: std::mem::take(&mut self.rec_per_key),
        }
    }

    /// At the end of a statement: the row buffers give back what a large row made them
    /// take (see [`crate::alloc::trim`]), so that a handler the server keeps in its table
    /// cache does not hold the memory of the largest BLOB it ever read.
    fn trim_buffers(&mut self) {
        crate::alloc::trim(&mut self.packed, self.rec_len);
        crate::alloc::trim(&mut self.blobs, self.rec_len);
    }

    fn current(&self) -> Result<Pos> {
        self.current.ok_or(Error::WrongCommand)
    }

    /// Counts a changed row, and asks for fresh statistics once a tenth of the table changed
    /// (HEAP's HEAP_STATS_UPDATE_THRESHOLD).
    fn count_change(&mut self, table: &mut Table) {
        self.records_changed += 1;
        if self.records_changed * 10 > table.records() {
            self.records_changed = 0;
            table.bump_key_stat_version();
        }
    }

    /// Notes a duplicate-key error's key for info(HA_STATUS_ERRKEY).
    fn note<T>(&mut self, r: Result<T>) -> Result<T> {
        if let Err(Error::DuplicateKey(k)) = &r {
            self.errkey = *k as i32;
        }
        r
    }
}

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

/// # Safety
/// As [`new_table`].
unsafe fn new_share(def: &rheap_table_def) -> Result<Share> {
    // SAFETY: passed on from the caller.
    Share::new(unsafe { new_table(def) }?, def.for_memory != 0)
}

/// A new internal temporary table, for an open that found none kept. Out of line (and cold:
/// most opens take a kept table), so that [`rheap_open`] does not reserve the stack a table is
/// built in, which would spread its frame over cache lines that each open then touches.
///
/// # Safety
/// As [`new_table`].
#[cold]
#[inline(never)]
unsafe fn new_internal(def: &rheap_table_def, key: Option<DefKey>) -> Result<Box<Internal>> {
    // SAFETY: passed on from the caller.
    crate::alloc::try_box(Internal::new(unsafe { new_table(def) }?, key))
}

/// Opens (creating it if need be) the named table `name`: out of line, as [`new_internal`].
///
/// # Safety
/// `name` a NUL-terminated string; `def` as [`new_table`].
#[inline(never)]
unsafe fn open_shared(name: *const c_char, def: &rheap_table_def) -> Result<(Open, bool)> {
    // SAFETY: passed on from the caller.
    let name = unsafe { table_name(name) }?;
    // SAFETY: as above.
    let (share, created) = TABLES.open(name, || unsafe { new_share(def) })?;
    Ok((Open::Shared(share), created))
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
/// tables rheap holds for the server in MEMORY's name (they have BLOBs by definition).
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
        let (open, created) = if def.internal != 0 {
            // SAFETY: the shim's definition is valid during this call.
            let key = unsafe { DefKey::of(def) };
            let mut internal = match key.as_ref().and_then(recycle::take) {
                Some(kept) => kept,
                // SAFETY: as above.
                None => unsafe { new_internal(def, key) }?,
            };
            h.adopt(std::mem::take(&mut internal.buffers));
            (Open::Internal(internal), true)
        } else {
            // SAFETY: the shim passes the table path; the definition as above.
            unsafe { open_shared(name, def) }?
        };
        {
            let t = open.read()?;
            h.rec_len = t.def().rec_len;
            h.tmp_table = def.tmp_table != 0;
            h.internal = def.internal != 0;
            h.key_stat_version = t.key_stat_version().wrapping_sub(1);
            h.rec_per_key.clear();
            crate::alloc::resize_default(&mut h.rec_per_key, t.def().keys.len())?;
        }
        // SAFETY: out-pointers to the shim's locals.
        unsafe {
            *thr_lock = open.thr_lock();
            *implicit_emptied = u8::from(created && def.internal == 0);
        }
        h.open = Some(open);
        h.current = None;
        h.cursor = Cursor::None;
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
        if let Some(Open::Internal(mut t)) = h.open.take() {
            t.rows_written += std::mem::take(&mut h.rows_unreported);
            t.buffers = h.leave();
            recycle::give(t);
        }
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
        // SAFETY: the shim's definition is valid during this call.
        TABLES.create(name, || unsafe { new_share(def) })?;
        Ok(())
    })
}

/// `handler::write_row`.
///
/// # Safety
/// `h` as for [`state`]; `buf` a record of the open table.
#[no_mangle]
#[link_section = ".text.hot.rheap.handler.rheap_write_row"]
pub unsafe extern "C" fn rheap_write_row(h: *mut rheap_handler, buf: *const u8) -> c_int {
    guard("rheap_write_row", || {
        // SAFETY: the shim passes its own handler.
        let h = unsafe { state(h) }?;
        // SAFETY: the server passes a whole record of the open table, rec_len bytes.
        let buf = unsafe { row(buf, h.rec_len) }?;
        let (open, h) = h.parts()?;
        let mut table = open.write()?;
        let r = if table.def().format.has_blobs() {
            // SAFETY: the server's record holds valid pointers to its BLOBs' bytes for the
            // duration of the call.
            unsafe { table.def().format.pack(buf, &mut h.packed) }
                .and_then(|_| table.write_packed(buf, &h.packed))
        } else {
            table.write(buf)
        };
        if r == Err(Error::TableFull) && h.internal {
            // The server now moves this internal table to its on-disk engine.
            status::add(Counter::InternalTablesConverted, 1);
        }
        h.note(r)?;
        // An internal table's rows are counted when it closes, with its other counters: one
        // change per table, not per row.
        if h.internal {
            h.rows_unreported += 1;
        } else {
            status::add(Counter::RowsWritten, 1);
        }
        h.count_change(&mut table);
        Ok(())
    })
}

/// `handler::update_row`: the row last read becomes `new_data`.
///
/// # Safety
/// `h` as for [`state`]; `new_data` a record of the open table.
#[no_mangle]
#[link_section = ".text.hot.rheap.handler.rheap_update_row"]
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
        let (open, h) = h.parts()?;
        let mut table = open.write()?;
        let pos = h.current()?;
        let r = if table.def().format.has_blobs() {
            // SAFETY: as in write_row: the new record's BLOB pointers are the server's, valid
            // during the call (and may point into `h.blobs`, which packing only reads).
            unsafe { table.def().format.pack(new_data, &mut h.packed) }
                .and_then(|_| table.update_packed(pos, new_data, &h.packed))
        } else {
            table.update(pos, new_data)
        };
        h.note(r)?;
        h.count_change(&mut table);
        Ok(())
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
        let (open, h) = h.parts()?;
        let mut table = open.write()?;
        table.delete(h.current()?)?;
        if !h.tmp_table {
            h.count_change(&mut table);
        }
        Ok(())
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
        let (open, h) = h.parts()?;
        let mut table = open.write()?;
        table.clear();
        if !h.tmp_table {
            table.bump_key_stat_version();
        }
        h.current = None;
        h.cursor = Cursor::None;
        Ok(())
    })
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
        let (open, h) = h.parts()?;
        h.seen_file_version = open.read()?.file_version();
        h.scan_next = 0;
        h.current = None;
        Ok(())
    })
}

/// `handler::rnd_next`: the next slot's row, `HA_ERR_RECORD_DELETED` for a freed slot (the
/// server reads on, counting it in `Handler_read_rnd_deleted`), or `HA_ERR_END_OF_FILE`.
///
/// # Safety
/// `h` as for [`state`]; `buf` writable for a record of the open table.
#[no_mangle]
#[link_section = ".text.hot.rheap.handler.rheap_rnd_next"]
pub unsafe extern "C" fn rheap_rnd_next(h: *mut rheap_handler, buf: *mut u8) -> c_int {
    guard("rheap_rnd_next", || {
        // SAFETY: the shim passes its own handler.
        let h = unsafe { state(h) }?;
        // SAFETY: the server passes record[0] (or record[1]) of the open table, rec_len bytes.
        let out = unsafe { row_mut(buf, h.rec_len) }?;
        let (open, h) = h.parts()?;
        let pos = h.scan_next;
        h.current = None;
        let read = open.read()?.read_slot_into(pos, out, &mut h.blobs);
        if !matches!(read, Err(Error::EndOfFile)) {
            // A freed slot is reported (HA_ERR_RECORD_DELETED) and passed, as HEAP's scan does.
            h.scan_next = pos + 1;
        }
        read?;
        h.current = Some(pos);
        Ok(())
    })
}

/// `handler::rnd_pos`: reads the row at a position from [`rheap_position`].
///
/// # Safety
/// `h` as for [`state`]; `buf` writable for a record; `pos` readable for `REF_LENGTH` bytes.
#[no_mangle]
#[link_section = ".text.hot.rheap.handler.rheap_rnd_pos"]
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
        h.current = None;
        if pos == NO_ROW {
            // What position() stored with no current row (HEAP's null row pointer).
            return Err(Error::EndOfFile);
        }
        let (open, h) = h.parts()?;
        open.read()?.read_into(pos, out, &mut h.blobs)?;
        h.current = Some(pos);
        Ok(())
    })
}

/// The position [`rheap_position`] stores when there is no current row, as HEAP stores a null
/// row pointer; [`rheap_rnd_pos`] answers it with `HA_ERR_END_OF_FILE`.
const NO_ROW: Pos = Pos::MAX;

/// `handler::position`: the current row's position, into `ref`.
///
/// # Safety
/// `h` as for [`state`]; `r` writable for `REF_LENGTH` bytes.
#[no_mangle]
#[link_section = ".text.hot.rheap.handler.rheap_position"]
pub unsafe extern "C" fn rheap_position(h: *mut rheap_handler, r: *mut u8) {
    guard_value("rheap_position", (), || {
        // SAFETY: the shim passes its own handler.
        let h = unsafe { state(h) }?;
        // SAFETY: the shim passes handler::ref, ref_length (REF_LENGTH) bytes.
        let out = unsafe { row_mut(r, REF_LENGTH) }?;
        out.copy_from_slice(&h.current.unwrap_or(NO_ROW).to_le_bytes());
        Ok(())
    })
}

/// `handler::info`. When the key statistics are due (see [`Handler::count_change`]), also
/// the HASH keys' rows-per-key, into `rec_per_key` (`nkeys` entries, 0 for "leave alone").
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
        let (open, h) = h.parts()?;
        let table = open.read()?;
        let s = table.stats();
        let refresh = h.key_stat_version != table.key_stat_version();
        if refresh {
            if rec_per_key.is_null() && nkeys > 0 {
                return Err(Error::WrongCommand);
            }
            let rpk: &mut [u64] = if nkeys == 0 {
                &mut []
            } else {
                // SAFETY: non-null, and the shim passes an array of nkeys entries.
                unsafe { std::slice::from_raw_parts_mut(rec_per_key, nkeys as usize) }
            };
            for (k, out) in rpk.iter_mut().enumerate() {
                let v = table.hash_rec_per_key(k)?;
                if let Some(slot) = h.rec_per_key.get_mut(k) {
                    *slot = v;
                }
                *out = v.unwrap_or(0);
            }
            h.records_changed = 0;
            h.key_stat_version = table.key_stat_version();
        }
        h.stats_records = s.records;
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
            errkey: h.errkey,
            key_stats_updated: u8::from(refresh),
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
        let (open, _) = h.parts()?;
        let records = open.read()?.records();
        Ok(records)
    })
}

/// `handler::remember_rnd_pos`: saves the current row for [`rheap_restart_rnd_next`].
///
/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_remember_rnd_pos(h: *mut rheap_handler) -> c_int {
    guard("rheap_remember_rnd_pos", || {
        // SAFETY: the shim passes its own handler.
        let h = unsafe { state(h) }?;
        h.remembered = Some(h.current()?);
        Ok(())
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
        let out = unsafe { row_mut(buf, h.rec_len) }?;
        let pos = h.remembered.ok_or(Error::WrongCommand)?;
        let (open, h) = h.parts()?;
        open.read()?.read_into(pos, out, &mut h.blobs)?;
        h.current = Some(pos);
        h.scan_next = pos + 1;
        Ok(())
    })
}

/// `handler::can_continue_handler_scan`: `mode` 1 for an index scan, 2 for a full scan.
///
/// # Safety
/// `h` as for [`state`].
#[no_mangle]
pub unsafe extern "C" fn rheap_can_continue_handler_scan(h: *mut rheap_handler, mode: u8) -> c_int {
    guard("rheap_can_continue_handler_scan", || {
        // SAFETY: the shim passes its own handler.
        let h = unsafe { state(h) }?;
        let (open, h) = h.parts()?;
        let table = open.read()?;
        let changed = match mode {
            1 => h.seen_key_version != table.key_version(),
            2 => h.seen_file_version != table.file_version(),
            _ => false,
        };
        if changed {
            Err(Error::RecordChanged)
        } else {
            Ok(())
        }
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
            h.cursor = Cursor::None;
        } else {
            let (open, _) = h.parts()?;
            open.write()?
                .set_all_keys_unique(operation as u32 == TO_UNIQUE);
        }
        Ok(())
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
        let h = unsafe { state(h) }?;
        h.cursor = Cursor::None;
        h.trim_buffers();
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
    let h = unsafe { state(h) }?;
    let (open, _) = h.parts()?;
    let mut table = open.write()?;
    f(&mut table)
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
