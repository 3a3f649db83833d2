//! One RHEAP table: its definition, its rows, its indexes and its counters.
//!
//! Every change goes through here so rows and indexes stay in step: a write takes a slot, then
//! adds the row to each index in key order, and undoes all of it on a duplicate key, leaving
//! the slot on the free list as HEAP does. Every block the table holds is counted by its
//! [`Meter`]: under [`LimitBy::Actual`] it refuses the block that would take the table past its
//! limit, and the write finds the table full. The memory HEAP *would* hold (rows and indexes)
//! is kept in ledgers, so that under [`LimitBy::Heap`] "table is full" comes at HEAP's row.

use crate::alloc::meter::Part;
use crate::alloc::{refusal, Arena, Meter};
use crate::catalog::live::{self, Live};
use crate::error::{Error, Result};
use crate::index::{Index, Probe, RowKeys};
use crate::key::{bytes_eq, Algorithm, Image, KeyDef, KeySeg, Row};
use crate::limits::{
    heap_row_size, index_bytes_per_row, rows_in_memory, BlockGeometry, HeapLedger, IndexLedger,
    LimitBy,
};
use crate::rows::format::RowFormat;
use crate::rows::records::{Pos, Step};
use crate::rows::store::RowStore;
use std::ops::Range;
use std::sync::Arc;

mod change;
pub mod spec;
mod write;

/// What a table is created from (see `rheap_table_def` in the shim header).
#[derive(Debug, Clone)]
pub struct TableDef {
    /// Bytes of one row in the server's record format.
    pub rec_len: usize,
    /// MAX_ROWS, 0 when not given.
    pub max_rows: u64,
    /// MIN_ROWS, 0 when not given.
    pub min_rows: u64,
    /// The table's memory limit: `max_heap_table_size` of the creating thread (for an internal
    /// table, what the server allows it).
    pub max_table_size: u64,
    /// What decides that the table is full: its real bytes, or HEAP's.
    pub limit_by: LimitBy,
    /// AUTO_INCREMENT= of CREATE TABLE, 0 when not given.
    pub auto_increment: u64,
    /// The indexes, in the server's key order.
    pub keys: Vec<KeyDef>,
    /// The key led by the AUTO_INCREMENT column, if any.
    pub auto_key: Option<AutoKey>,
    /// A temporary table (internal, or CREATE TEMPORARY TABLE).
    pub tmp_table: bool,
    /// How rows are stored: as they are, or packed (VARCHARs at their length, BLOBs inline).
    pub format: RowFormat,
    /// Report MEMORY's DATA_LENGTH and INDEX_LENGTH (what HEAP would hold) rather than the
    /// bytes rheap holds: for ENGINE=MEMORY tables rheap serves, whose SHOW TABLE STATUS must
    /// stay MEMORY's.
    pub heap_lengths: bool,
}

/// The AUTO_INCREMENT column and the key it leads.
#[derive(Debug, Clone)]
pub struct AutoKey {
    pub key: usize,
    /// The column, read with its own type (the key may compare it as bytes).
    pub seg: KeySeg,
}

impl TableDef {
    /// The memory limit HEAP applies (never below one pointer node).
    pub fn memory_limit(&self) -> u64 {
        self.max_table_size.max(1024)
    }

    /// The most rows the table plans for, as HEAP computes it: what fits in the memory limit
    /// with the index overhead of each row, lowered to MAX_ROWS when that is given.
    pub fn max_records(&self) -> u64 {
        let index_bytes = self
            .keys
            .iter()
            .map(|k| index_bytes_per_row(k.algorithm == Algorithm::Btree, k.key_length as u64))
            .sum();
        let by_memory = rows_in_memory(self.rec_len as u64, index_bytes, self.memory_limit());
        match self.max_rows {
            0 => by_memory,
            m => m.min(by_memory),
        }
    }
}

/// The arena for a table's indexes, its first block sized for MIN_ROWS rows (within the
/// table's limit) of about what each key takes per row.
fn new_arena(def: &TableDef, max_records: u64, meter: &Meter) -> Result<Arena> {
    /// Bytes a key takes per row besides its image: a hash group or a tree node.
    const PER_ROW: usize = 48;
    let per_row = def.keys.iter().map(|k| k.image_len() + PER_ROW).sum();
    Arena::try_new(
        per_row,
        def.min_rows.min(max_records),
        def.memory_limit(),
        meter.for_part(Part::Index),
    )
}

/// A write's result, with a block a limit refused ([`refusal`]) made a table that is full.
fn full_if_refused<T>(r: Result<T>) -> Result<T> {
    match r {
        Err(Error::OutOfMemory) if refusal::take() => Err(Error::TableFull),
        r => r,
    }
}

/// Counters that `handler::info()` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    pub records: u64,
    pub deleted: u64,
    pub data_length: u64,
    pub index_length: u64,
    pub max_data_length: u64,
    pub delete_length: u64,
    pub rec_len: u64,
    pub create_time: i64,
    pub auto_increment: u64,
}

#[derive(Debug)]
pub struct Table {
    def: TableDef,
    store: RowStore,
    max_records: u64,
    /// The row count past which a new block finds the table full (0: none): HEAP's
    /// `max_records` under [`LimitBy::Heap`], MAX_ROWS alone under [`LimitBy::Actual`].
    row_limit: u64,
    /// The table in the list of live tables: its [`Meter`] (every block of the rows and
    /// indexes, counted once, and the limit under [`LimitBy::Actual`]) and its row count.
    live: Arc<Live>,
    /// The bytes HEAP would hold for these rows: with `index_ledgers`, decides "table is full".
    ledger: HeapLedger,
    /// Declared before `arena`, so they are dropped (and give their pieces back) first.
    indexes: Vec<Index>,
    /// The indexes' memory.
    arena: Arena,
    index_ledgers: Vec<IndexLedger>,
    /// DISABLE KEYS (or the server's bulk insert into a temporary table) emptied the indexes.
    keys_disabled: bool,
    /// HA_EXTRA_CHANGE_KEY_TO_UNIQUE / _TO_DUP: every key unique, or none.
    unique_override: Option<bool>,
    create_time: i64,
    /// The highest AUTO_INCREMENT value used (the next one is this plus one).
    auto_increment: u64,
    /// Changes on every write, delete and clear: an index scan must not go on across it.
    key_version: u64,
    /// Changes when the table is emptied: a full scan must not go on across it.
    file_version: u64,
    /// Changes when the key statistics are due to be recomputed.
    key_stat_version: u64,
    /// Buffers a change reuses, so that a write, update or delete allocates nothing for its
    /// key images once they have grown (taken out while a change runs).
    scratch: Option<Box<Scratch>>,
    /// The record bytes the keys are read from ([`KeyDef::record_bytes`]): an update that
    /// leaves them alone moves no key.
    key_bytes: Vec<Range<usize>>,
}

/// The most bytes of change buffers a renewed table keeps ([`Table::renew`]).
const KEPT_SCRATCH: usize = 4 << 10;

#[derive(Debug, Default)]
struct Scratch {
    /// The old row of an update or delete.
    row: Vec<u8>,
    old: Vec<Image>,
    new: Vec<Image>,
    /// Keys an update has moved so far.
    moved: Vec<usize>,
    /// A row packed for storage.
    packed: Vec<u8>,
    /// The BLOB bytes of `row`.
    blobs: Vec<u8>,
}

impl Scratch {
    /// Bytes the buffers hold room for.
    fn bytes(&self) -> usize {
        let images = |v: &Vec<Image>| {
            v.capacity() * std::mem::size_of::<Image>()
                + v.iter().map(|i| i.bytes.capacity()).sum::<usize>()
        };
        self.row.capacity()
            + images(&self.old)
            + images(&self.new)
            + self.moved.capacity() * std::mem::size_of::<usize>()
            + self.packed.capacity()
            + self.blobs.capacity()
    }
}

/// Stores `packed` in a new slot of `store`, and counts in `ledger` the HEAP block the row
/// starts (`new_block`, as [`Table::room_for`] said): what every write does once no key
/// refuses the row. Of the two parts, not the table, so that a write holding an index can
/// call it too.
#[inline(always)]
fn insert_row(
    store: &mut RowStore,
    ledger: &mut HeapLedger,
    packed: &[u8],
    new_block: bool,
) -> Result<Pos> {
    let pos = store.insert(packed)?;
    if new_block {
        ledger.add_block();
    }
    Ok(pos)
}

/// [`Table::row_keys`] from the table's parts, for a method that changes its indexes.
#[inline(always)]
fn row_keys<'a>(store: &'a RowStore, def: &'a TableDef, k: usize) -> RowKeys<'a> {
    RowKeys {
        store,
        def: &def.keys[k],
        rec_len: def.rec_len,
        probe: Probe::Image,
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        live::unregister(&self.live);
    }
}

impl Table {
    /// An empty table of `def`, as [`try_new`](Self::try_new) makes it; panics when out of
    /// memory (for tests and tools; the engine uses `try_new`).
    pub fn new(def: TableDef, create_time: i64) -> Table {
        match Self::try_new(def, create_time) {
            Ok(t) => t,
            Err(e) => panic!("making a table: {e}"),
        }
    }

    /// An empty table of `def`, made at `create_time`; `OutOfMemory` when its structures
    /// cannot be had.
    pub fn try_new(def: TableDef, create_time: i64) -> Result<Table> {
        let max_records = def.max_records();
        let geometry =
            BlockGeometry::new(heap_row_size(def.rec_len as u64), def.min_rows, max_records);
        let (row_limit, meter) = match def.limit_by {
            LimitBy::Heap => (max_records, Meter::try_new(0)?),
            LimitBy::Actual => (def.max_rows, Meter::try_new(def.memory_limit())?),
        };
        let arena = new_arena(&def, max_records, &meter)?;
        let back_to_back = back_to_back(&def);
        let stride = stride(back_to_back);
        let indexes =
            crate::alloc::try_collect(def.keys.iter().map(|k| Index::new(k, &arena, stride)))?;
        let index_ledgers =
            crate::alloc::try_collect(def.keys.iter().map(|k| match k.algorithm {
                Algorithm::Hash => IndexLedger::hash(def.min_rows, max_records),
                Algorithm::Btree => IndexLedger::btree(),
            }))?;
        let store = RowStore::new(
            def.format.try_clone()?,
            def.rec_len,
            def.min_rows.min(max_records),
            def.memory_limit(),
            &meter,
            back_to_back,
        );
        let key_bytes = KeyDef::record_bytes(&def.keys)?;
        // Last, so that a table that could not be made never shows in the list.
        let live = live::register(meter, def.memory_limit())?;
        Ok(Table {
            store,
            max_records,
            row_limit,
            live,
            ledger: HeapLedger::new(geometry),
            indexes,
            arena,
            index_ledgers,
            keys_disabled: false,
            unique_override: None,
            auto_increment: def.auto_increment.saturating_sub(1),
            create_time,
            key_version: 0,
            file_version: 0,
            key_stat_version: 1,
            scratch: None,
            key_bytes,
            def,
        })
    }

    pub fn def(&self) -> &TableDef {
        &self.def
    }

    pub fn records(&self) -> u64 {
        self.store.records()
    }

    /// Keys the table maintains now (none while keys are disabled).
    #[inline]
    fn active_keys(&self) -> usize {
        if self.keys_disabled {
            0
        } else {
            self.def.keys.len()
        }
    }

    #[inline]
    fn is_unique(&self, k: usize) -> bool {
        self.unique_override.unwrap_or(self.def.keys[k].unique)
    }

    /// Whether key `k` refuses a second row with `img` (then [`is_duplicate`] looks).
    #[inline]
    fn checks_duplicates(&self, k: usize, img: &Image) -> bool {
        self.is_unique(k) && (self.def.keys[k].nulls_equal || !img.has_null)
    }

    /// Whether `img` is a duplicate in key `k`.
    #[inline]
    fn is_duplicate(&self, k: usize, img: &Image) -> Result<bool> {
        Ok(self.checks_duplicates(k, img)
            && self.indexes[k].contains(&img.bytes, &self.row_keys(k))?)
    }

    /// The newest row whose key `k` equals `row`'s (a HASH key): where a duplicate that a
    /// write or update was refused for is (Aria's `dup_ref`, which the server reads a unique
    /// constraint's row back by). None when no row has that key.
    pub fn row_with_key(&self, k: usize, row: Row<'_>) -> Result<Option<Pos>> {
        let (def, index) = self.index(k)?;
        let Index::Hash(hash) = index else {
            return Err(Error::WrongCommand);
        };
        let mut img = Image::default();
        def.image_of_row_into(row, &mut img)?;
        hash.newest(&img.bytes, &self.row_keys(k).for_record(row.rec))
    }

    /// The stored rows' keys under key `k`, which its index compares keys with.
    #[inline]
    pub fn row_keys(&self, k: usize) -> RowKeys<'_> {
        row_keys(&self.store, &self.def, k)
    }

    /// Adds row `pos` (`row`) to key `k`. `checked`: [`is_duplicate`](Self::is_duplicate)
    /// just said no, so a key that refuses duplicates does not have the image yet.
    fn add_key(
        &mut self,
        k: usize,
        img: &Image,
        row: &[u8],
        pos: Pos,
        checked: bool,
    ) -> Result<()> {
        let def = &self.def.keys[k];
        let packed = match def.algorithm {
            Algorithm::Hash => None,
            Algorithm::Btree => Some(def.heap_packed_len(row)?),
        };
        let absent = checked && self.checks_duplicates(k, img);
        let rows = row_keys(&self.store, &self.def, k);
        self.indexes[k].insert(&img.bytes, pos, absent, &rows)?;
        if let Some(packed) = packed {
            self.index_ledgers[k].add_node(packed);
        }
        Ok(())
    }

    /// Removes row `pos` (`row`) from key `k`.
    fn remove_key(&mut self, k: usize, img: &Image, row: &[u8], pos: Pos) -> Result<()> {
        let def = &self.def.keys[k];
        if def.algorithm == Algorithm::Btree {
            self.index_ledgers[k].remove_node(def.heap_packed_len(row)?);
        }
        let rows = row_keys(&self.store, &self.def, k);
        if self.indexes[k].remove(&img.bytes, pos, &rows)? {
            Ok(())
        } else {
            Err(Error::internal(format!("row {pos} missing from key {k}")))
        }
    }

    fn images(&self, row: Row<'_>) -> Result<Vec<Image>> {
        let mut out = Vec::new();
        self.fill_images(row, &mut out)?;
        Ok(out)
    }

    /// The images of `row` under every maintained key, into `out` (its buffers are reused).
    fn fill_images(&self, row: Row<'_>, out: &mut Vec<Image>) -> Result<()> {
        let keys = &self.def.keys[..self.active_keys()];
        out.truncate(keys.len());
        crate::alloc::resize_default(out, keys.len())?;
        for (k, img) in keys.iter().zip(out.iter_mut()) {
            k.image_of_row_into(row, img)?;
        }
        Ok(())
    }

    /// Record `rec` with `packed`, its packed form (when rows are packed): what a key over a
    /// BLOB reads it from.
    #[inline]
    pub(super) fn row_of<'a>(&'a self, rec: &'a [u8], packed: &'a [u8]) -> Row<'a> {
        match self.store.is_packed() {
            true => Row::packed(rec, self.store.format(), packed),
            false => Row::plain(rec),
        }
    }

    /// Record `rec`, read from row `pos`, with the row's stored form.
    pub(super) fn stored_row<'a>(&'a self, rec: &'a [u8], pos: Pos) -> Result<Row<'a>> {
        Ok(self.row_of(rec, self.read(pos)?))
    }

    /// Runs `f` with the scratch buffers taken out of the table, and puts them back.
    #[inline]
    fn with_scratch<T>(
        &mut self,
        f: impl FnOnce(&mut Self, &mut Scratch) -> Result<T>,
    ) -> Result<T> {
        let mut s = match self.scratch.take() {
            Some(s) => s,
            None => crate::alloc::try_box(Scratch::default())?,
        };
        let r = f(self, &mut s);
        // A large BLOB leaves its room in the buffers; it goes back with this change.
        crate::alloc::trim(&mut s.packed, self.def.rec_len);
        crate::alloc::trim(&mut s.blobs, self.def.rec_len);
        // Put back into the empty place: nothing to drop there, so no drop (which the compiler
        // must assume may unwind) between `f`'s result and the return, which would keep the
        // result in memory and copy it out again.
        let empty = self.scratch.replace(s);
        debug_assert!(empty.is_none(), "`f` does not put a scratch buffer back");
        std::mem::forget(empty);
        r
    }

    /// The stored bytes of row `pos`: the record itself unless rows are packed.
    pub fn read(&self, pos: Pos) -> Result<&[u8]> {
        self.store.stored(pos).ok_or(Error::RecordDeleted)
    }

    /// Row `pos` as a record, into `out`; BLOB pointers point into `blobs`, which must be
    /// kept as long as the record is used.
    #[inline(always)]
    pub fn read_into(&self, pos: Pos, out: &mut [u8], blobs: &mut Vec<u8>) -> Result<()> {
        self.store.read_into(pos, out, blobs)
    }

    /// The first row at or after `from` (a position, or [`after`](Self::after) one), in scan
    /// order.
    pub fn next(&self, from: Pos) -> Option<Pos> {
        self.store.next_live(from)
    }

    /// Where a scan goes on after the row at `pos`.
    pub fn after(&self, pos: Pos) -> Pos {
        self.store.after(pos)
    }

    /// One step of the scan from `cursor` (0, or a step's `next`; scan order is HEAP's slot
    /// order), the row into `out` as [`read_into`](Self::read_into) does; `RecordDeleted` for
    /// a freed slot, which HEAP's scan reports too (the server counts it in
    /// `Handler_read_rnd_deleted`), `EndOfFile` past the last slot. Also where it read and
    /// where it goes on.
    pub fn read_slot_into(
        &self,
        cursor: Pos,
        out: &mut [u8],
        blobs: &mut Vec<u8>,
    ) -> (Step, Result<()>) {
        self.store.read_slot_into(cursor, out, blobs)
    }

    /// Removes every row (DELETE without WHERE, TRUNCATE). The AUTO_INCREMENT counter stays.
    pub fn clear(&mut self) {
        self.live.set_rows(0);
        self.store.clear();
        self.ledger.clear();
        self.clear_indexes(false);
        self.key_version += 1;
        self.file_version += 1;
    }

    /// Makes the table what [`Table::new`] made of its definition, created at `create_time`:
    /// empty, its settings (DISABLE KEYS, unique override, AUTO_INCREMENT) and versions as new.
    /// Kept: the definition, what was derived from it, the buffers a change reuses, and with
    /// `keep_blocks` the blocks of its rows and indexes (which then hold nothing: the next
    /// rows fill them as a new table's would), else they go back to the cache. For a table used
    /// again in place of a new one of the same definition ([`crate::recycle`]).
    pub fn renew(&mut self, create_time: i64, keep_blocks: bool) {
        self.live.set_rows(0);
        if keep_blocks {
            self.store.clear_keeping_blocks();
        } else {
            self.store.clear();
        }
        self.clear_indexes(keep_blocks);
        self.ledger.clear();
        self.keys_disabled = false;
        self.unique_override = None;
        self.auto_increment = self.def.auto_increment.saturating_sub(1);
        self.create_time = create_time;
        self.key_version = 0;
        self.file_version = 0;
        self.key_stat_version = 1;
        // Buffers that grew past a few rows' worth (a BLOB row's) are not kept.
        if self
            .scratch
            .as_ref()
            .is_some_and(|s| s.bytes() > KEPT_SCRATCH)
        {
            self.scratch = None;
        }
    }

    /// Empties every index. With `keep_blocks` each empties in place and keeps its room in the
    /// arena. Else they start over in a new arena: the old one's blocks go back to the cache as
    /// soon as its indexes are gone. An arena that holds no block is kept: it never took one
    /// (it gives none back before it goes, and a large piece's own block is not part of its
    /// growth), so it is as new; a table without keys never uses its arena.
    ///
    /// Out of memory for a new arena, the indexes empty in place instead: this cannot fail.
    fn clear_indexes(&mut self, keep_blocks: bool) {
        let fresh = match keep_blocks || self.arena.bytes() == 0 {
            true => None,
            false => new_arena(&self.def, self.max_records, self.live.meter()).ok(),
        };
        match fresh {
            None => self.indexes.iter_mut().for_each(Index::clear),
            Some(arena) => {
                // Dropped before the old arena goes, then made again in their own room.
                self.indexes.clear();
                self.arena = arena;
                let arena = &self.arena;
                let stride = stride(self.store.is_back_to_back());
                self.indexes
                    .extend(self.def.keys.iter().map(|k| Index::new(k, arena, stride)));
            }
        }
        self.index_ledgers.iter_mut().for_each(IndexLedger::clear);
    }

    /// Index `k`, if the table maintains it now.
    #[inline]
    pub fn index(&self, k: usize) -> Result<(&KeyDef, &Index)> {
        if k < self.active_keys() {
            Ok((&self.def.keys[k], &self.indexes[k]))
        } else {
            Err(Error::WrongIndex)
        }
    }

    /// DISABLE KEYS: empties every index and stops maintaining them.
    pub fn disable_indexes(&mut self) {
        if !self.def.keys.is_empty() {
            self.clear_indexes(false);
            self.keys_disabled = true;
        }
    }

    /// ENABLE KEYS: only on an empty table, since the indexes are not rebuilt (HEAP's rule).
    pub fn enable_indexes(&mut self) -> Result<()> {
        if self.ledger.bytes() != 0 || self.index_length() != 0 {
            return Err(Error::Crashed);
        }
        self.keys_disabled = false;
        Ok(())
    }

    pub fn indexes_disabled(&self) -> bool {
        self.keys_disabled
    }

    /// HA_EXTRA_CHANGE_KEY_TO_UNIQUE (true) / _TO_DUP (false).
    pub fn set_all_keys_unique(&mut self, unique: bool) {
        self.unique_override = Some(unique);
    }

    pub fn reset_auto_increment(&mut self, value: u64) {
        self.auto_increment = value;
    }

    /// The next AUTO_INCREMENT value (HEAP reports the highest used plus one).
    pub fn next_auto_increment(&self) -> u64 {
        self.auto_increment.saturating_add(1)
    }

    #[inline]
    pub fn key_version(&self) -> u64 {
        self.key_version
    }

    pub fn file_version(&self) -> u64 {
        self.file_version
    }

    pub fn key_stat_version(&self) -> u64 {
        self.key_stat_version
    }

    /// Asks every handler to recompute its key statistics at its next `info()`.
    pub fn bump_key_stat_version(&mut self) {
        self.key_stat_version += 1;
    }

    /// HEAP's rows-per-key estimate for key `k`, for HASH keys only: 1 for unique keys, else
    /// the rows per hash chain, at least 2.
    pub fn hash_rec_per_key(&self, k: usize) -> Result<Option<u64>> {
        let Some(def) = self.def.keys.get(k) else {
            return Ok(None);
        };
        let Index::Hash(h) = &self.indexes[k] else {
            return Ok(None);
        };
        if def.unique {
            return Ok(Some(1));
        }
        let records = self.store.records();
        let (mut rec, mut blobs) = (crate::alloc::zeroed(self.def.rec_len)?, Vec::new());
        let buckets = h.hash_buckets(records, |pos| {
            self.read_into(pos, &mut rec, &mut blobs)?;
            def.heap_hash(&rec)
        })?;
        Ok(Some(match buckets {
            0 => 2,
            b => (records / b).max(2),
        }))
    }

    /// The bytes of the blocks holding the table's rows and indexes.
    pub fn memory_bytes(&self) -> u64 {
        self.live.meter().bytes()
    }

    /// The table as the list of live tables shows it (read without the table's lock).
    pub fn live(&self) -> &Live {
        &self.live
    }

    /// What HEAP would hold for the indexes.
    fn index_length(&self) -> u64 {
        self.index_ledgers.iter().map(IndexLedger::bytes).sum()
    }

    pub fn stats(&self) -> Stats {
        let rec_len = self.def.rec_len as u64;
        Stats {
            records: self.store.records(),
            deleted: self.store.deleted(),
            data_length: if self.def.heap_lengths {
                self.ledger.bytes()
            } else {
                self.live.meter().part_bytes(Part::Rows)
            },
            index_length: if self.def.heap_lengths {
                self.index_length()
            } else {
                self.live.meter().part_bytes(Part::Index)
            },
            max_data_length: self.max_records.saturating_mul(rec_len),
            delete_length: self.store.deleted() * rec_len,
            rec_len,
            create_time: self.create_time,
            auto_increment: self.next_auto_increment(),
        }
    }

    pub fn debug_check_consistency(&self) {
        self.store.debug_check_consistency();
        self.arena.debug_check_consistency();
        let meter = self.live.meter();
        assert_eq!(
            (meter.part_bytes(Part::Rows), meter.part_bytes(Part::Index)),
            (self.store.bytes() as u64, self.arena.bytes() as u64),
            "the meter counts every block of the rows and the indexes"
        );
        let g = self.ledger.geometry();
        let blocks = self.store.slots().div_ceil(g.records_in_block);
        assert!(
            self.ledger.bytes() >= blocks * g.alloc_size,
            "the ledger covers every slot"
        );
        for (k, index) in self.indexes.iter().enumerate() {
            index.debug_check_consistency(&self.row_keys(k));
            let want = if k < self.active_keys() {
                self.store.records()
            } else {
                0
            };
            assert_eq!(index.entries(), want, "key {k} has one entry per row");
        }
        if !self.keys_disabled {
            let mut pos = 0;
            let mut row = vec![0u8; self.def.rec_len];
            let mut blobs = Vec::new();
            while let Some(p) = self.store.next_live(pos) {
                self.store
                    .read_into(p, &mut row, &mut blobs)
                    .expect("a live row");
                let images = self
                    .stored_row(&row, p)
                    .and_then(|r| self.images(r))
                    .expect("images");
                for (k, img) in images.iter().enumerate() {
                    let found = match &self.indexes[k] {
                        Index::Hash(h) => h
                            .lookup(&img.bytes, &self.row_keys(k))
                            .expect("a lookup")
                            .any(|q| q == p),
                        Index::Btree(b) => b
                            .contains_entry(&img.bytes, p, &self.row_keys(k))
                            .expect("a search"),
                    };
                    assert!(found, "row {p} is under its key in index {k}");
                }
                pos = self.store.after(p);
            }
        }
    }
}

/// Whether `def`'s rows go back to back ([`crate::rows::log::RowLog`]): an internal temporary
/// table's packed rows, when each HASH key is unique (a key with duplicates keeps, for each
/// row, a link that a position of a slot store makes small).
fn back_to_back(def: &TableDef) -> bool {
    def.format.is_internal()
        && def
            .keys
            .iter()
            .all(|k| k.algorithm == Algorithm::Btree || k.unique)
}

/// How far apart the positions of rows are at least.
fn stride(back_to_back: bool) -> u32 {
    match back_to_back {
        true => crate::rows::log::MIN_HOME,
        false => 1,
    }
}

#[cfg(test)]
mod blob_key_tests;
#[cfg(test)]
mod tests;
