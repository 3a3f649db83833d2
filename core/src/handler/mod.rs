//! What one handler object of the server keeps, and the `handler` methods on it: opening and
//! closing a table (the kept-table life cycle of internal tables, [`crate::recycle`]), writing,
//! changing and deleting rows, full scans and positions, statistics. The index reads are in
//! `handler/index.rs`.
//!
//! Row buffers are in the server's record format and `rec_len` bytes long; rows are copied in
//! and out, so nothing outside the table ever points into its memory. The plugin's
//! `extern "C"` functions of the same names translate the server's arguments and call these.

pub mod cursor;
mod index;

use crate::alloc::refusal;
use crate::catalog::live::Kind;
use crate::catalog::share::{Buffers, Internal, Open, Share};
use crate::error::{Error, Result};
use crate::handler::cursor::Cursor;
use crate::key::{Image, Row};
use crate::recycle::{self, Shape};
use crate::rows::records::Pos;
use crate::status::{self, Counter};
use crate::table::{Stats, Table};
use std::sync::Arc;

/// The state of one handler: the open table, and the rest ([`State`], which the handler derefs
/// to, so that a method can hold the table and change the rest at once). `L` is the lock the
/// server keeps for a named table ([`Share::lock`]).
#[derive(Debug)]
pub struct Handler<L> {
    open: Option<Open<L>>,
    st: State,
}

impl<L> Default for Handler<L> {
    fn default() -> Self {
        Handler {
            open: None,
            st: State::default(),
        }
    }
}

/// What one handler keeps besides its table.
#[derive(Debug, Default)]
pub struct State {
    pub(crate) rec_len: usize,
    /// The slot a scan looks at next.
    scan_next: Pos,
    /// The slot of the row last read: what update_row, delete_row and position act on.
    pub(crate) current: Option<Pos>,
    /// The row remember_rnd_pos saved.
    remembered: Option<Pos>,
    /// The index scan in progress, and the key it is on (for every kind of cursor).
    pub(crate) cursor: Cursor,
    pub(crate) cursor_key: usize,
    /// The image of the key last looked up: a HASH cursor's key (its buffer is reused, so a
    /// lookup per row, as GROUP BY makes, allocates nothing).
    pub(crate) key: Image,
    /// HEAP's last HASH key (`lastkey`), in the server's key format: the key of the last HASH
    /// read that found a row (but for a unique key with no nullable part, whose reads leave
    /// it), which NEXT and PREV search again from once a read or step left the cursor off the
    /// rows ([`Cursor::HashEdge`]); empty, as zeros, until then. Kept only for named tables:
    /// the HANDLER statement that steps that way does not reach internal ones.
    pub(crate) hash_last: Vec<u8>,
    /// The key of the last duplicate-key error.
    errkey: i32,
    /// The row a unique constraint last refused a write or update for (Aria's `dup_ref`,
    /// which the server reads that row back by), when there is one.
    dup_pos: Option<Pos>,
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
    pub(crate) blobs: Vec<u8>,
    /// The BLOB bytes of the row the server held when [`Handler::hold_row_blobs`] was called:
    /// kept, where they are, for as long as the handler lives.
    held_blobs: Vec<u8>,
    /// Rows changed through this handler since its statistics were last refreshed.
    records_changed: u64,
    /// The table's key_stat_version when this handler last refreshed its statistics.
    key_stat_version: u64,
    /// HASH keys' rows-per-key as last reported to the server, and the row count then.
    pub(crate) rec_per_key: Vec<Option<u64>>,
    pub(crate) stats_records: u64,
    /// The table's versions when this handler last positioned a scan (HANDLER statement).
    pub(crate) seen_key_version: u64,
    seen_file_version: u64,
}

impl<L> std::ops::Deref for Handler<L> {
    type Target = State;
    fn deref(&self) -> &State {
        &self.st
    }
}

impl<L> std::ops::DerefMut for Handler<L> {
    fn deref_mut(&mut self) -> &mut State {
        &mut self.st
    }
}

/// The position [`Handler::position`] gives when there is no current row, as HEAP gives a null
/// row pointer; [`Handler::rnd_pos`] answers it with [`Error::EndOfFile`].
pub const NO_ROW: Pos = Pos::MAX;

/// What `handler::info` reports.
#[derive(Debug, Clone, Copy)]
pub struct Info {
    pub stats: Stats,
    /// The key of the last duplicate-key error.
    pub errkey: i32,
    /// The HASH keys' rows-per-key were refreshed (into the array given to [`Handler::info`]).
    pub key_stats_updated: bool,
}

/// Which scan a HANDLER statement continues ([`Handler::can_continue_handler_scan`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandlerScan {
    Index,
    Full,
    /// Any other mode: always continues.
    Other,
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

    /// Notes a duplicate-key error's key for info's `errkey`.
    fn note<T>(&mut self, r: Result<T>) -> Result<T> {
        if let Err(Error::DuplicateKey(k) | Error::DuplicateUnique(k)) = &r {
            self.errkey = *k as i32;
        }
        r
    }

    /// A write or update of `buf` (packed into `self.packed` when the table has BLOBs) that key
    /// `k` refused: when `k` is a unique constraint, the duplicate as Aria reports one, and
    /// the row it collided with remembered for `dup_ref`.
    fn refused<T>(&mut self, table: &Table, buf: &[u8], r: Result<T>) -> Result<T> {
        let Err(Error::DuplicateKey(k)) = r else {
            return r;
        };
        if !table.def().keys.get(k).is_some_and(|d| d.constraint) {
            return r;
        }
        let format = &table.def().format;
        let row = match format.has_blobs() {
            true => Row::packed(buf, format, &self.packed),
            false => Row::plain(buf),
        };
        self.dup_pos = table.row_with_key(k, row)?;
        Err(Error::DuplicateUnique(k))
    }
}

/// A new internal temporary table, for an open that found none kept. Out of line (and cold:
/// most opens take a kept table), so that an open does not reserve the stack a table is built
/// in, which would spread its frame over cache lines that each open then touches.
#[cold]
#[inline(never)]
fn new_internal(
    build: impl FnOnce() -> Result<Table>,
    key: Option<Shape>,
) -> Result<Box<Internal>> {
    crate::alloc::try_box(Internal::new(build()?, key))
}

impl<L> Handler<L> {
    /// The open table, and the rest of the handler.
    pub(crate) fn parts(&mut self) -> Result<(&mut Open<L>, &mut State)> {
        match &mut self.open {
            Some(open) => Ok((open, &mut self.st)),
            None => Err(Error::WrongCommand),
        }
    }

    /// Bytes of a record of the open table.
    pub fn rec_len(&self) -> usize {
        self.st.rec_len
    }

    /// The server's lock of the open named table (None for an internal table, or none open).
    pub fn lock(&self) -> Option<&L> {
        self.open.as_ref().and_then(Open::lock)
    }

    /// `handler::open` of an internal temporary table: one kept from an earlier statement with
    /// an equal definition (`key`), else a new one from `build`. `path` and `connection` (the
    /// server's path of the table, the connection that opens it) are what the list of live
    /// tables shows of it ([`crate::catalog::live`]).
    pub fn open_internal(
        &mut self,
        key: Option<Shape>,
        tmp_table: bool,
        (path, connection): (&str, u64),
        build: impl FnOnce() -> Result<Table>,
    ) -> Result<()> {
        let mut internal = match key.as_ref().and_then(recycle::take) {
            Some(kept) => kept,
            None => new_internal(build, key)?,
        };
        let live = internal.table().live();
        live.set_kind(Kind::Internal, connection);
        live.set_name(path);
        self.st.adopt(std::mem::take(&mut internal.buffers));
        self.open_with(Open::Internal(internal), tmp_table, true)
    }

    /// `handler::open` of a named table.
    pub fn open_shared(&mut self, share: Arc<Share<L>>, tmp_table: bool) -> Result<()> {
        self.open_with(Open::Shared(share), tmp_table, false)
    }

    fn open_with(&mut self, open: Open<L>, tmp_table: bool, internal: bool) -> Result<()> {
        {
            let t = open.read()?;
            let h = &mut self.st;
            h.rec_len = t.def().rec_len;
            h.tmp_table = tmp_table;
            h.internal = internal;
            h.key_stat_version = t.key_stat_version().wrapping_sub(1);
            h.rec_per_key.clear();
            crate::alloc::resize_default(&mut h.rec_per_key, t.def().keys.len())?;
        }
        self.open = Some(open);
        self.st.current = None;
        self.st.cursor = Cursor::None;
        self.st.hash_last.clear();
        Ok(())
    }

    /// `handler::close`: an internal table is kept for the next statement ([`recycle::give`]),
    /// with this handler's buffers; a named table stays in the registry.
    pub fn close(&mut self) {
        if let Some(Open::Internal(mut t)) = self.open.take() {
            t.rows_written += std::mem::take(&mut self.st.rows_unreported);
            t.buffers = self.st.leave();
            t.table().live().set_kind(Kind::Kept, 0);
            recycle::give(t);
        }
        self.st.current = None;
    }

    /// Keeps the BLOB bytes of the row last read where they are, for as long as this handler
    /// lives, so that reading more rows does not change them: a table in Aria's place that
    /// moves to Aria in the middle of a write reads all its rows first, while the server's
    /// record may still point at the BLOBs of the row it read last (INTERSECT ALL's unfold
    /// writes copies of that very row).
    pub fn hold_row_blobs(&mut self) {
        self.st.held_blobs = std::mem::take(&mut self.st.blobs);
    }

    /// `handler::write_row`.
    ///
    /// # Safety
    /// When the table has BLOB columns, `buf`'s BLOB pointers must be valid for their lengths
    /// for the duration of the call (the server's record guarantees it).
    pub unsafe fn write_row(&mut self, buf: &[u8]) -> Result<()> {
        let (open, h) = self.parts()?;
        let buf = buf.get(..h.rec_len).ok_or(Error::WrongCommand)?;
        let mut table = open.write()?;
        let r = if table.def().format.has_blobs() {
            // SAFETY: the caller's contract.
            unsafe { table.def().format.pack(buf, &mut h.packed) }
                .and_then(|_| table.write_packed(buf, &h.packed))
        } else {
            table.write(buf)
        };
        let r = h.refused(&table, buf, r);
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
    }

    /// `handler::update_row`: the row last read becomes `new_data`.
    ///
    /// # Safety
    /// As [`write_row`](Self::write_row), for `new_data` (which may point into this handler's
    /// BLOB buffer: packing only reads it).
    pub unsafe fn update_row(&mut self, new_data: &[u8]) -> Result<()> {
        let (open, h) = self.parts()?;
        let new_data = new_data.get(..h.rec_len).ok_or(Error::WrongCommand)?;
        let mut table = open.write()?;
        let pos = h.current()?;
        let r = if table.def().format.has_blobs() {
            // SAFETY: the caller's contract.
            unsafe { table.def().format.pack(new_data, &mut h.packed) }
                .and_then(|_| table.update_packed(pos, new_data, &h.packed))
        } else {
            table.update(pos, new_data)
        };
        let r = h.refused(&table, new_data, r);
        h.note(r)?;
        h.count_change(&mut table);
        Ok(())
    }

    /// `handler::delete_row`: deletes the row last read; a scan in progress goes on after it.
    pub fn delete_row(&mut self) -> Result<()> {
        let (open, h) = self.parts()?;
        let mut table = open.write()?;
        table.delete(h.current()?)?;
        if !h.tmp_table {
            h.count_change(&mut table);
        }
        Ok(())
    }

    /// `handler::delete_all_rows`.
    pub fn delete_all_rows(&mut self) -> Result<()> {
        let (open, h) = self.parts()?;
        let mut table = open.write()?;
        table.clear();
        if !h.tmp_table {
            table.bump_key_stat_version();
        }
        h.current = None;
        h.cursor = Cursor::None;
        Ok(())
    }

    /// `handler::rnd_init`.
    pub fn rnd_init(&mut self) -> Result<()> {
        let (open, h) = self.parts()?;
        h.seen_file_version = open.read()?.file_version();
        h.scan_next = 0;
        h.current = None;
        Ok(())
    }

    /// `handler::rnd_next`: the next slot's row into `out`, [`Error::RecordDeleted`] for a freed
    /// slot (the server reads on), or [`Error::EndOfFile`].
    pub fn rnd_next(&mut self, out: &mut [u8]) -> Result<()> {
        let (open, h) = self.parts()?;
        h.current = None;
        let (step, read) = open.read()?.read_slot_into(h.scan_next, out, &mut h.blobs);
        if !matches!(read, Err(Error::EndOfFile)) {
            // A freed slot is reported and passed, as HEAP's scan does.
            h.scan_next = step.next;
        }
        read?;
        h.current = Some(step.at);
        Ok(())
    }

    /// `handler::rnd_pos`: the row at a position from [`position`](Self::position).
    pub fn rnd_pos(&mut self, out: &mut [u8], pos: Pos) -> Result<()> {
        self.st.current = None;
        if pos == NO_ROW {
            return Err(Error::EndOfFile);
        }
        let (open, h) = self.parts()?;
        open.read()?.read_into(pos, out, &mut h.blobs)?;
        h.current = Some(pos);
        Ok(())
    }

    /// `handler::position`: the current row's position ([`NO_ROW`] without one).
    pub fn position(&self) -> Pos {
        self.st.current.unwrap_or(NO_ROW)
    }

    /// The position of the row a unique constraint last refused a write or update for (what
    /// Aria's `info(HA_STATUS_ERRKEY)` puts in `dup_ref`); [`NO_ROW`] without one.
    pub fn dup_position(&self) -> Pos {
        self.st.dup_pos.unwrap_or(NO_ROW)
    }

    /// `handler::info`. When the key statistics are due (see `count_change`), also the HASH
    /// keys' rows-per-key, into `rec_per_key` (0 for "leave alone").
    pub fn info(&mut self, rec_per_key: &mut [u64]) -> Result<Info> {
        let (open, h) = self.parts()?;
        let table = open.read()?;
        let stats = table.stats();
        let mut refresh = h.key_stat_version != table.key_stat_version();
        if refresh {
            let mut fresh = || -> Result<()> {
                for (k, out) in rec_per_key.iter_mut().enumerate() {
                    let v = table.hash_rec_per_key(k)?;
                    if let Some(slot) = h.rec_per_key.get_mut(k) {
                        *slot = v;
                    }
                    *out = v.unwrap_or(0);
                }
                Ok(())
            };
            match fresh() {
                Ok(()) => {
                    h.records_changed = 0;
                    h.key_stat_version = table.key_stat_version();
                }
                // Estimates that could not be had for memory stay as they were, to be made
                // at the next call: the rest (the row count, the key of a duplicate that the
                // server is about to name) is still given.
                Err(Error::OutOfMemory) => refresh = false,
                Err(e) => return Err(e),
            }
        }
        h.stats_records = stats.records;
        Ok(Info {
            stats,
            errkey: h.errkey,
            key_stats_updated: refresh,
        })
    }

    /// Whether `info` would refresh the key statistics now.
    pub fn key_stats_due(&mut self) -> Result<bool> {
        let (open, h) = self.parts()?;
        Ok(h.key_stat_version != open.read()?.key_stat_version())
    }

    /// `handler::records`: the exact row count.
    pub fn records(&mut self) -> Result<u64> {
        let (open, _) = self.parts()?;
        let records = open.read()?.records();
        Ok(records)
    }

    /// `handler::remember_rnd_pos`: saves the current row for
    /// [`restart_rnd_next`](Self::restart_rnd_next).
    pub fn remember_rnd_pos(&mut self) -> Result<()> {
        self.st.remembered = Some(self.st.current()?);
        Ok(())
    }

    /// `handler::restart_rnd_next`: reads the remembered row again; the scan goes on after it.
    pub fn restart_rnd_next(&mut self, out: &mut [u8]) -> Result<()> {
        let pos = self.st.remembered.ok_or(Error::WrongCommand)?;
        let (open, h) = self.parts()?;
        let table = open.read()?;
        table.read_into(pos, out, &mut h.blobs)?;
        h.current = Some(pos);
        h.scan_next = table.after(pos);
        Ok(())
    }

    /// `handler::can_continue_handler_scan`: [`Error::RecordChanged`] when the table changed
    /// since the HANDLER statement positioned its scan.
    pub fn can_continue_handler_scan(&mut self, scan: HandlerScan) -> Result<()> {
        let (open, h) = self.parts()?;
        let table = open.read()?;
        let changed = match scan {
            HandlerScan::Index => h.seen_key_version != table.key_version(),
            HandlerScan::Full => h.seen_file_version != table.file_version(),
            HandlerScan::Other => false,
        };
        if changed {
            Err(Error::RecordChanged)
        } else {
            Ok(())
        }
    }

    /// `HA_EXTRA_RESET_STATE`: forgets the index scan.
    pub fn reset_state(&mut self) {
        self.st.cursor = Cursor::None;
    }

    /// `HA_EXTRA_CHANGE_KEY_TO_UNIQUE` / `_TO_DUP`: every key unique, or back as defined.
    pub fn set_all_keys_unique(&mut self, unique: bool) -> Result<()> {
        self.with_table(|t| {
            t.set_all_keys_unique(unique);
            Ok(())
        })
    }

    /// `handler::reset`, the end of a statement: the scan is forgotten, and the row buffers
    /// give back what a large row made them take (see [`crate::alloc::trim`]), so that a
    /// handler the server keeps in its table cache does not hold the memory of the largest
    /// BLOB it ever read.
    pub fn reset(&mut self) {
        // A refusal no write answered for is not the next statement's.
        refusal::take();
        let h = &mut self.st;
        h.cursor = Cursor::None;
        crate::alloc::trim(&mut h.packed, h.rec_len);
        crate::alloc::trim(&mut h.blobs, h.rec_len);
    }

    /// Runs `f` on the open table, for the table-wide handler methods (DISABLE KEYS, ...).
    pub fn with_table<T>(&mut self, f: impl FnOnce(&mut Table) -> Result<T>) -> Result<T> {
        let (open, _) = self.parts()?;
        let mut table = open.write()?;
        f(&mut table)
    }
}

#[cfg(test)]
pub(crate) mod tests;
