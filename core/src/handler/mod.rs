//! What one handler object of the server keeps, and the `handler` methods on it: opening and
//! closing a table (the kept-table life cycle of internal tables, [`crate::recycle`]), writing,
//! changing and deleting rows, full scans and positions, statistics. The index reads are in
//! `handler/index.rs`.
//!
//! Row buffers are in the server's record format and `rec_len` bytes long; rows are copied in
//! and out, so nothing outside the table ever points into its memory. The plugin's
//! `extern "C"` functions of the same names translate the server's arguments and call these.

mod index;

use crate::alloc::refusal;
use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::key::Image;
use crate::live::Kind;
use crate::records::Pos;
use crate::recycle::{self, DefKey};
use crate::share::{Buffers, Internal, Open, Share};
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
        if let Err(Error::DuplicateKey(k)) = &r {
            self.errkey = *k as i32;
        }
        r
    }
}

/// A new internal temporary table, for an open that found none kept. Out of line (and cold:
/// most opens take a kept table), so that an open does not reserve the stack a table is built
/// in, which would spread its frame over cache lines that each open then touches.
#[cold]
#[inline(never)]
fn new_internal(
    build: impl FnOnce() -> Result<Table>,
    key: Option<DefKey>,
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
    /// tables shows of it ([`crate::live`]).
    pub fn open_internal(
        &mut self,
        key: Option<DefKey>,
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
pub(crate) mod tests {
    use super::*;
    use crate::testing::{self, counters_lock, rec, BTREE, HASH, REC_LEN, UNIQUE_HASH};

    /// A handler on a new internal table that is never kept (no definition key).
    pub(crate) fn internal(tmp_table: bool) -> Handler<()> {
        let mut h = Handler::default();
        h.open_internal(None, tmp_table, ("#sql-test", 1), || {
            Ok(testing::table(tmp_table))
        })
        .unwrap();
        h
    }

    pub(crate) fn write(h: &mut Handler<()>, r: &[u8]) -> Result<()> {
        // SAFETY: the table has no BLOB columns.
        unsafe { h.write_row(r) }
    }

    pub(crate) fn update(h: &mut Handler<()>, r: &[u8]) -> Result<()> {
        // SAFETY: the table has no BLOB columns.
        unsafe { h.update_row(r) }
    }

    /// Where the internal table a handler has open lives (the same table again when equal).
    fn internal_addr(h: &Handler<()>) -> *const Internal {
        match &h.open {
            Some(Open::Internal(t)) => &**t,
            _ => panic!("no internal table open"),
        }
    }

    fn is_internal(r: Result<impl std::fmt::Debug>) -> bool {
        matches!(r, Err(Error::Internal(_)))
    }

    #[test]
    fn rows_are_written_scanned_positioned_changed_and_deleted() {
        let _g = counters_lock();
        let mut h = internal(false);
        assert_eq!(h.rec_len(), REC_LEN);
        assert!(h.lock().is_none(), "an internal table has no server lock");
        for i in 0..4 {
            write(&mut h, &rec(Some(i), i as u8, 0)).unwrap();
        }
        assert_eq!(h.records(), Ok(4));
        let mut out = [0u8; REC_LEN];
        // A short buffer is refused.
        assert_eq!(write(&mut h, &[0u8; REC_LEN - 1]), Err(Error::WrongCommand));

        // No current row yet: nothing to change, delete or remember.
        assert_eq!(h.position(), NO_ROW);
        assert_eq!(
            update(&mut h, &rec(Some(9), 9, 9)),
            Err(Error::WrongCommand)
        );
        assert_eq!(h.delete_row(), Err(Error::WrongCommand));
        assert_eq!(h.remember_rnd_pos(), Err(Error::WrongCommand));
        assert_eq!(h.restart_rnd_next(&mut out), Err(Error::WrongCommand));

        // Row 1 by position, deleted.
        h.rnd_pos(&mut out, 1).unwrap();
        assert_eq!(out[..], rec(Some(1), 1, 0)[..]);
        assert_eq!(h.position(), 1);
        h.delete_row().unwrap();
        assert_eq!(h.records(), Ok(3));

        // A full scan reports the freed slot and goes on past it.
        h.rnd_init().unwrap();
        assert_eq!(h.position(), NO_ROW, "rnd_init forgets the current row");
        h.rnd_next(&mut out).unwrap();
        assert_eq!((out.to_vec(), h.position()), (rec(Some(0), 0, 0), 0));
        assert_eq!(h.rnd_next(&mut out), Err(Error::RecordDeleted));
        assert_eq!(h.position(), NO_ROW, "a freed slot is no current row");
        assert_eq!(
            update(&mut h, &rec(Some(9), 9, 9)),
            Err(Error::WrongCommand)
        );
        h.rnd_next(&mut out).unwrap();
        assert_eq!((out.to_vec(), h.position()), (rec(Some(2), 2, 0), 2));
        h.remember_rnd_pos().unwrap();
        h.rnd_next(&mut out).unwrap();
        assert_eq!((out.to_vec(), h.position()), (rec(Some(3), 3, 0), 3));
        assert_eq!(h.rnd_next(&mut out), Err(Error::EndOfFile));
        assert_eq!(
            h.rnd_next(&mut out),
            Err(Error::EndOfFile),
            "and stays there"
        );
        assert_eq!(h.position(), NO_ROW);

        // Back to the remembered row; the scan goes on after it.
        h.restart_rnd_next(&mut out).unwrap();
        assert_eq!((out.to_vec(), h.position()), (rec(Some(2), 2, 0), 2));
        h.rnd_next(&mut out).unwrap();
        assert_eq!(h.position(), 3);

        // position / rnd_pos round trip, and the null position.
        let p = h.position();
        h.rnd_pos(&mut out, 0).unwrap();
        h.rnd_pos(&mut out, p).unwrap();
        assert_eq!((out.to_vec(), h.position()), (rec(Some(3), 3, 0), 3));
        assert_eq!(h.rnd_pos(&mut out, NO_ROW), Err(Error::EndOfFile));
        assert_eq!(h.position(), NO_ROW);
        assert_eq!(h.rnd_pos(&mut out, 1), Err(Error::RecordDeleted));
        assert_eq!(
            h.position(),
            NO_ROW,
            "a failed rnd_pos leaves no current row"
        );

        // The current row changes.
        h.rnd_pos(&mut out, 3).unwrap();
        update(&mut h, &rec(Some(30), 3, 1)).unwrap();
        h.rnd_pos(&mut out, 3).unwrap();
        assert_eq!(out[..], rec(Some(30), 3, 1)[..]);
        assert_eq!(
            update(&mut h, &rec(Some(30), 3, 1)[..REC_LEN - 1]),
            Err(Error::WrongCommand),
            "a short buffer"
        );
        h.with_table(|t| {
            t.debug_check_consistency();
            Ok(())
        })
        .unwrap();
        h.close();
    }

    #[test]
    fn a_duplicate_key_is_reported_by_info() {
        let _g = counters_lock();
        let mut h = internal(false);
        let mut rpk = [0u64; 3];
        assert_eq!(h.info(&mut rpk).unwrap().errkey, 0);
        write(&mut h, &rec(Some(1), 1, 1)).unwrap();
        write(&mut h, &rec(Some(2), 2, 2)).unwrap();
        assert_eq!(
            write(&mut h, &rec(Some(1), 5, 5)),
            Err(Error::DuplicateKey(UNIQUE_HASH))
        );
        assert_eq!(h.info(&mut rpk).unwrap().errkey, UNIQUE_HASH as i32);
        assert_eq!(h.records(), Ok(2));
        // An update to a taken value: refused, the row unchanged.
        let mut out = [0u8; REC_LEN];
        h.rnd_pos(&mut out, 1).unwrap();
        assert_eq!(
            update(&mut h, &rec(Some(1), 2, 2)),
            Err(Error::DuplicateKey(UNIQUE_HASH))
        );
        h.rnd_pos(&mut out, 1).unwrap();
        assert_eq!(out[..], rec(Some(2), 2, 2)[..]);
        // Every key unique: the BTREE key (key 0) now refuses an equal (b, c).
        h.set_all_keys_unique(true).unwrap();
        assert_eq!(
            write(&mut h, &rec(Some(3), 2, 2)),
            Err(Error::DuplicateKey(BTREE))
        );
        assert_eq!(h.info(&mut rpk).unwrap().errkey, BTREE as i32);
        h.set_all_keys_unique(false).unwrap();
        write(&mut h, &rec(Some(3), 2, 2)).unwrap();
        h.close();
    }

    #[test]
    fn delete_all_rows_forgets_the_scan_and_the_current_row() {
        let _g = counters_lock();
        let mut h = internal(false);
        for i in 0..3 {
            write(&mut h, &rec(Some(i), 1, 1)).unwrap();
        }
        let mut out = [0u8; REC_LEN];
        h.index_read_map(&mut out, BTREE, 3, Some(crate::index::Find::Exact), |n| {
            Ok(&[1u8, 1][..n])
        })
        .unwrap();
        assert_ne!(h.position(), NO_ROW);
        assert!(matches!(h.cursor, Cursor::Btree { .. }));
        h.delete_all_rows().unwrap();
        assert_eq!(h.position(), NO_ROW);
        assert!(matches!(h.cursor, Cursor::None));
        assert_eq!(h.delete_row(), Err(Error::WrongCommand));
        assert_eq!(h.index_step(&mut out, true), Err(Error::EndOfFile));
        assert_eq!(h.records(), Ok(0));
        // New rows are not found by the forgotten scan, but by a new one.
        write(&mut h, &rec(Some(7), 1, 1)).unwrap();
        assert_eq!(h.index_step(&mut out, true), Err(Error::EndOfFile));
        h.rnd_init().unwrap();
        h.rnd_next(&mut out).unwrap();
        assert_eq!(out[..], rec(Some(7), 1, 1)[..]);
        h.close();
    }

    #[test]
    fn statistics_refresh_once_a_tenth_of_the_rows_changed() {
        let _g = counters_lock();
        let mut h = internal(false);
        let mut rpk = [99u64; 3];
        let i = h.info(&mut rpk).unwrap();
        assert!(i.key_stats_updated, "the first info refreshes");
        assert_eq!(i.stats.records, 0);
        assert_eq!(rpk[BTREE], 0, "BTREE keys are left alone");
        assert_eq!(rpk[UNIQUE_HASH], 1);
        assert_eq!(rpk[HASH], 2);
        rpk = [99; 3];
        assert!(!h.info(&mut rpk).unwrap().key_stats_updated);
        assert_eq!(rpk, [99; 3], "not refreshed: not written");
        assert_eq!(h.key_stats_due(), Ok(false));

        for i in 0..30 {
            write(&mut h, &rec(Some(i), (i % 3) as u8, 0)).unwrap();
        }
        let i = h.info(&mut rpk).unwrap();
        assert!(i.key_stats_updated);
        assert_eq!(i.stats.records, 30);
        assert_eq!(rpk[UNIQUE_HASH], 1);
        assert!(rpk[HASH] >= 2, "{rpk:?}");
        assert_eq!(h.rec_per_key[HASH], Some(rpk[HASH]));
        assert_eq!(h.stats_records, 30);

        // Three changes of 30 rows are not more than a tenth; the fourth is.
        let mut out = [0u8; REC_LEN];
        for n in 0..4 {
            assert_eq!(h.key_stats_due(), Ok(false), "after {n} changes");
            h.rnd_pos(&mut out, n).unwrap();
            update(&mut h, &rec(Some(100 + n as i32), 0, 1)).unwrap();
        }
        assert_eq!(h.key_stats_due(), Ok(true));
        rpk = [99; 3];
        assert!(h.info(&mut rpk).unwrap().key_stats_updated);
        assert_eq!(rpk[UNIQUE_HASH], 1);
        assert!(!h.info(&mut rpk).unwrap().key_stats_updated);

        // Deletes count too, on a table that is not temporary.
        for n in 4..7 {
            h.rnd_pos(&mut out, n).unwrap();
            h.delete_row().unwrap();
        }
        // Three of 27 rows: 30 > 27.
        assert_eq!(h.key_stats_due(), Ok(true));
        h.info(&mut rpk).unwrap();
        h.delete_all_rows().unwrap();
        assert_eq!(
            h.key_stats_due(),
            Ok(true),
            "emptying asks for new statistics"
        );
        h.close();
    }

    #[test]
    fn deletes_on_a_temporary_table_do_not_count_towards_statistics() {
        let _g = counters_lock();
        let mut h = internal(true);
        for i in 0..30 {
            write(&mut h, &rec(Some(i), 0, 0)).unwrap();
        }
        let mut rpk = [0u64; 3];
        assert!(h.info(&mut rpk).unwrap().key_stats_updated);
        let mut out = [0u8; REC_LEN];
        for n in 0..20 {
            h.rnd_pos(&mut out, n).unwrap();
            h.delete_row().unwrap();
        }
        assert_eq!(h.records(), Ok(10));
        assert_eq!(h.key_stats_due(), Ok(false));
        h.delete_all_rows().unwrap();
        assert_eq!(h.key_stats_due(), Ok(false), "nor does emptying it");
        // Writes do.
        write(&mut h, &rec(Some(1), 0, 0)).unwrap();
        assert_eq!(h.key_stats_due(), Ok(true));
        h.close();
    }

    #[test]
    fn a_handler_scan_sees_changes_made_through_another_handler() {
        let _g = counters_lock();
        let live = status::get(Counter::TablesLive);
        let share = Arc::new(Share::new(testing::table(false), (), false));
        let (mut a, mut b) = (Handler::<()>::default(), Handler::<()>::default());
        a.open_shared(share.clone(), false).unwrap();
        b.open_shared(share.clone(), false).unwrap();
        assert_eq!(a.lock(), Some(&()));
        assert_eq!(status::get(Counter::TablesLive), live + 1);
        let rows = status::get(Counter::RowsWritten);
        for i in 0..3 {
            write(&mut b, &rec(Some(i), 1, i as u8)).unwrap();
        }
        assert_eq!(
            status::get(Counter::RowsWritten),
            rows + 3,
            "a named table's rows count as they are written"
        );
        let mut out = [0u8; REC_LEN];

        // The index scan.
        a.index_edge(&mut out, BTREE, true).unwrap();
        assert_eq!(a.can_continue_handler_scan(HandlerScan::Index), Ok(()));
        a.index_step(&mut out, true).unwrap();
        assert_eq!(a.can_continue_handler_scan(HandlerScan::Index), Ok(()));
        write(&mut b, &rec(Some(10), 0, 0)).unwrap();
        assert_eq!(
            a.can_continue_handler_scan(HandlerScan::Index),
            Err(Error::RecordChanged)
        );
        assert_eq!(a.can_continue_handler_scan(HandlerScan::Other), Ok(()));
        // Positioned again: it continues, until a delete.
        a.index_read_map(&mut out, BTREE, 1, Some(crate::index::Find::Exact), |n| {
            Ok(&[1u8, 0][..n])
        })
        .unwrap();
        assert_eq!(a.can_continue_handler_scan(HandlerScan::Index), Ok(()));
        // An update that changes no key does not stop it (as HEAP: no key_version change).
        b.rnd_pos(&mut out, 1).unwrap();
        update(&mut b, &out.clone()).unwrap();
        assert_eq!(a.can_continue_handler_scan(HandlerScan::Index), Ok(()));
        b.rnd_pos(&mut out, 3).unwrap();
        b.delete_row().unwrap();
        assert_eq!(
            a.can_continue_handler_scan(HandlerScan::Index),
            Err(Error::RecordChanged)
        );

        // The full scan: rows written or deleted do not stop it, emptying the table does.
        a.rnd_init().unwrap();
        a.rnd_next(&mut out).unwrap();
        write(&mut b, &rec(Some(11), 0, 0)).unwrap();
        b.rnd_pos(&mut out, 0).unwrap();
        b.delete_row().unwrap();
        assert_eq!(a.can_continue_handler_scan(HandlerScan::Full), Ok(()));
        b.delete_all_rows().unwrap();
        assert_eq!(
            a.can_continue_handler_scan(HandlerScan::Full),
            Err(Error::RecordChanged)
        );
        a.rnd_init().unwrap();
        assert_eq!(a.can_continue_handler_scan(HandlerScan::Full), Ok(()));

        a.close();
        b.close();
        drop((a, b));
        assert_eq!(Arc::strong_count(&share), 1, "the handlers let go of it");
        drop(share);
        assert_eq!(status::get(Counter::TablesLive), live);
    }

    /// HEAP 10.11's `heap_update` ends with `if (key_changed) share->key_version++`, but
    /// nothing in it sets `key_changed`: an UPDATE, even one that moves a key, leaves
    /// `key_version` alone, and `HANDLER ... READ idx NEXT` after another connection's UPDATE
    /// goes on. rheap's does the same (only writes, deletes and clears change it).
    #[test]
    fn an_update_that_moves_a_key_lets_a_handler_index_scan_go_on_as_heap() {
        let _g = counters_lock();
        let share = Arc::new(Share::new(testing::table(false), (), false));
        let (mut a, mut b) = (Handler::<()>::default(), Handler::<()>::default());
        a.open_shared(share.clone(), false).unwrap();
        b.open_shared(share, false).unwrap();
        for i in 0..3 {
            write(&mut b, &rec(Some(i), 1, i as u8)).unwrap();
        }
        let mut out = [0u8; REC_LEN];
        a.index_edge(&mut out, BTREE, true).unwrap();
        b.rnd_pos(&mut out, 2).unwrap();
        update(&mut b, &rec(Some(2), 0, 0)).unwrap();
        assert_eq!(a.can_continue_handler_scan(HandlerScan::Index), Ok(()));
    }

    #[test]
    fn a_closed_internal_table_is_kept_and_serves_an_equal_definition() {
        let _g = counters_lock();
        let key = testing::def_key("kept-table", 1);
        let other = testing::def_key("kept-table", 2);
        let live = recycle::counter(Counter::TablesLive);
        let rows = recycle::counter(Counter::RowsWritten);
        let reused = status::get(Counter::InternalTablesReused);
        let created = status::get(Counter::InternalTablesCreated);
        let builds = std::cell::Cell::new(0);
        let build = || {
            builds.set(builds.get() + 1);
            Ok(testing::table(true))
        };

        let mut h = Handler::<()>::default();
        h.open_internal(Some(key.clone()), true, ("#sql-test", 1), build)
            .unwrap();
        assert_eq!(builds.get(), 1);
        assert_eq!(recycle::counter(Counter::TablesLive), live + 1);
        assert_eq!(status::get(Counter::InternalTablesCreated), created + 1);
        for i in 0..3 {
            write(&mut h, &rec(Some(i), 0, 0)).unwrap();
        }
        assert_eq!(
            recycle::counter(Counter::RowsWritten),
            rows,
            "an internal table's rows are counted when it closes"
        );
        let mut rpk = [0u64; 3];
        h.info(&mut rpk).unwrap();
        let first = internal_addr(&h);
        // A lookup makes room in the handler's key buffer: it is left with the table.
        let mut r = rec(Some(1), 0, 0);
        assert_eq!(h.find_unique_row(&mut r, UNIQUE_HASH), Ok(true));
        let room = h.key.bytes.capacity();
        assert!(room > 0);
        h.close();
        assert_eq!(h.position(), NO_ROW);
        assert_eq!(h.records(), Err(Error::WrongCommand), "nothing open");
        assert_eq!(
            recycle::counter(Counter::TablesLive),
            live,
            "kept is not live"
        );
        assert_eq!(recycle::counter(Counter::RowsWritten), rows + 3);

        // An equal definition takes the kept table, empty, without building one.
        let mut h2 = Handler::<()>::default();
        h2.open_internal(Some(key.clone()), true, ("#sql-test", 1), build)
            .unwrap();
        assert_eq!(builds.get(), 1, "not built again");
        assert_eq!(internal_addr(&h2), first, "the same table");
        assert_eq!(
            h2.key.bytes.capacity(),
            room,
            "with the last handler's buffers"
        );
        assert_eq!(h2.rec_per_key.len(), 3);
        assert_eq!(h2.records(), Ok(0));
        let i = h2.info(&mut rpk).unwrap();
        assert!(i.key_stats_updated, "a new table's statistics are due");
        assert_eq!(i.stats.records, 0);
        assert_eq!(status::get(Counter::InternalTablesReused), reused + 1);
        assert_eq!(
            status::get(Counter::InternalTablesCreated),
            created + 2,
            "served twice"
        );
        assert_eq!(recycle::counter(Counter::TablesLive), live + 1);
        assert_eq!(recycle::counter(Counter::RowsWritten), rows + 3);
        // Its rows are its own.
        h2.rnd_init().unwrap();
        let mut out = [0u8; REC_LEN];
        assert_eq!(h2.rnd_next(&mut out), Err(Error::EndOfFile));
        write(&mut h2, &rec(Some(0), 0, 0)).unwrap();

        // A different definition, while the first is in use: a new table.
        let mut h3 = Handler::<()>::default();
        h3.open_internal(Some(other.clone()), true, ("#sql-test", 1), build)
            .unwrap();
        assert_eq!(builds.get(), 2);
        assert_ne!(internal_addr(&h3), first);
        assert_eq!(recycle::counter(Counter::TablesLive), live + 2);
        h3.close();
        h2.close();
        assert_eq!(recycle::counter(Counter::TablesLive), live);
        assert_eq!(recycle::counter(Counter::RowsWritten), rows + 4);

        // The kept tables go: the counters they were missing are made up.
        recycle::release_all();
        assert_eq!(recycle::counter(Counter::TablesLive), live);
        assert_eq!(status::get(Counter::TablesLive), live);
        assert_eq!(recycle::counter(Counter::RowsWritten), rows + 4);
        assert_eq!(status::get(Counter::RowsWritten), rows + 4);
        let mut h4 = Handler::<()>::default();
        h4.open_internal(Some(key), true, ("#sql-test", 1), build)
            .unwrap();
        assert_eq!(builds.get(), 3, "none kept any more");
        h4.close();
        recycle::release_all();
    }

    #[test]
    fn a_full_internal_table_counts_as_converted_and_its_refused_rows_are_not_written() {
        let _g = counters_lock();
        let small = || {
            Ok(Table::new(
                crate::table::TableDef {
                    max_rows: 10,
                    ..testing::def(true)
                },
                0,
            ))
        };
        let converted = status::get(Counter::InternalTablesConverted);
        let rows = recycle::counter(Counter::RowsWritten);
        let mut h = Handler::<()>::default();
        h.open_internal(None, true, ("#sql-test", 1), small)
            .unwrap();
        // A refused duplicate is no conversion.
        write(&mut h, &rec(Some(0), 0, 0)).unwrap();
        assert_eq!(
            write(&mut h, &rec(Some(0), 0, 0)),
            Err(Error::DuplicateKey(UNIQUE_HASH))
        );
        assert_eq!(status::get(Counter::InternalTablesConverted), converted);
        let mut n = 1;
        let full = loop {
            match write(&mut h, &rec(Some(n), 0, 0)) {
                Ok(()) => n += 1,
                Err(e) => break e,
            }
            assert!(n < 100_000, "never full");
        };
        assert_eq!(full, Error::TableFull);
        assert!(n >= 10);
        assert_eq!(status::get(Counter::InternalTablesConverted), converted + 1);
        h.close();
        assert_eq!(recycle::counter(Counter::RowsWritten), rows + n as u64);

        // A named table that fills up is not converted.
        let share = Arc::new(Share::new(small().unwrap(), (), false));
        let mut h = Handler::<()>::default();
        h.open_shared(share, false).unwrap();
        for i in 0..n {
            write(&mut h, &rec(Some(i), 0, 0)).unwrap();
        }
        assert_eq!(write(&mut h, &rec(Some(n), 0, 0)), Err(Error::TableFull));
        assert_eq!(status::get(Counter::InternalTablesConverted), converted + 1);
        assert_eq!(status::get(Counter::RowsWritten), rows + 2 * n as u64);
    }

    #[test]
    fn a_table_without_a_definition_key_is_not_kept() {
        let _g = counters_lock();
        let live = recycle::counter(Counter::TablesLive);
        let rows = recycle::counter(Counter::RowsWritten);
        let mut h = internal(true);
        assert_eq!(recycle::counter(Counter::TablesLive), live + 1);
        write(&mut h, &rec(Some(1), 0, 0)).unwrap();
        h.close();
        assert_eq!(status::get(Counter::TablesLive), live, "dropped");
        assert_eq!(recycle::counter(Counter::RowsWritten), rows + 1);
        assert_eq!(status::get(Counter::RowsWritten), rows + 1);
    }

    #[test]
    fn a_panic_while_changing_an_internal_table_poisons_it() {
        let _g = counters_lock();
        let key = testing::def_key("poisoned", 0);
        let live = recycle::counter(Counter::TablesLive);
        let builds = std::cell::Cell::new(0);
        let build = || {
            builds.set(builds.get() + 1);
            Ok(testing::table(true))
        };
        let mut h = Handler::<()>::default();
        h.open_internal(Some(key.clone()), true, ("#sql-test", 1), build)
            .unwrap();
        write(&mut h, &rec(Some(1), 0, 0)).unwrap();
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            h.with_table(|_| -> Result<()> { panic!("a bug while changing the table") })
        }));
        assert!(panicked.is_err());
        let mut out = [0u8; REC_LEN];
        assert!(is_internal(h.records()));
        h.rnd_init().unwrap_err();
        assert!(is_internal(h.rnd_next(&mut out)));
        assert!(is_internal(h.rnd_pos(&mut out, 0)));
        assert!(is_internal(write(&mut h, &rec(Some(2), 0, 0))));
        assert!(is_internal(h.index_edge(&mut out, BTREE, true)));
        assert!(is_internal(h.info(&mut [0; 3])));
        h.close();
        assert_eq!(
            recycle::counter(Counter::TablesLive),
            live,
            "dropped, not kept"
        );
        let mut h2 = Handler::<()>::default();
        h2.open_internal(Some(key), true, ("#sql-test", 1), build)
            .unwrap();
        assert_eq!(
            builds.get(),
            2,
            "a new table: the poisoned one was not kept"
        );
        assert_eq!(h2.records(), Ok(0));
        h2.close();
        recycle::release_all();
    }

    #[test]
    fn a_panic_while_changing_a_named_table_poisons_it_for_every_handler() {
        let _g = counters_lock();
        let share = Arc::new(Share::new(testing::table(false), (), false));
        let (mut a, mut b) = (Handler::<()>::default(), Handler::<()>::default());
        a.open_shared(share.clone(), false).unwrap();
        b.open_shared(share, false).unwrap();
        write(&mut a, &rec(Some(1), 0, 0)).unwrap();
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            a.with_table(|_| -> Result<()> { panic!("a bug while changing the table") })
        }));
        assert!(panicked.is_err());
        assert!(is_internal(a.records()));
        assert!(is_internal(b.records()));
        assert!(is_internal(write(&mut b, &rec(Some(2), 0, 0))));
    }

    #[test]
    fn reset_forgets_the_index_scan() {
        let _g = counters_lock();
        let mut h = internal(false);
        write(&mut h, &rec(Some(1), 0, 0)).unwrap();
        write(&mut h, &rec(Some(2), 0, 1)).unwrap();
        let mut out = [0u8; REC_LEN];
        h.index_edge(&mut out, BTREE, true).unwrap();
        h.reset_state();
        assert_eq!(h.index_step(&mut out, true), Err(Error::EndOfFile));
        h.index_edge(&mut out, BTREE, true).unwrap();
        h.reset();
        assert_eq!(h.index_step(&mut out, true), Err(Error::EndOfFile));
        // A closed handler answers WrongCommand.
        h.close();
        assert_eq!(h.rnd_init(), Err(Error::WrongCommand));
        assert_eq!(h.rnd_next(&mut out), Err(Error::WrongCommand));
        assert_eq!(h.index_step(&mut out, true), Err(Error::WrongCommand));
        assert_eq!(h.delete_all_rows(), Err(Error::WrongCommand));
    }
}
