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
use crate::error::{Error, Result};
use crate::index::{Index, Probe, RowKeys};
use crate::key::{bytes_eq, Algorithm, Image, KeyDef, KeySeg};
use crate::limits::{
    heap_row_size, index_bytes_per_row, rows_in_memory, BlockGeometry, HeapLedger, IndexLedger,
    LimitBy,
};
use crate::live::{self, Live};
use crate::records::{Pos, Step};
use crate::row::RowFormat;
use crate::row_store::RowStore;
use std::ops::Range;
use std::sync::Arc;

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

    fn images(&self, row: &[u8]) -> Result<Vec<Image>> {
        let mut out = Vec::new();
        self.fill_images(row, &mut out)?;
        Ok(out)
    }

    /// The images of `row` under every maintained key, into `out` (its buffers are reused).
    fn fill_images(&self, row: &[u8], out: &mut Vec<Image>) -> Result<()> {
        let keys = &self.def.keys[..self.active_keys()];
        out.truncate(keys.len());
        crate::alloc::resize_default(out, keys.len())?;
        for (k, img) in keys.iter().zip(out.iter_mut()) {
            k.image_of_record_into(row, img)?;
        }
        Ok(())
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

    /// Adds a row; `TableFull` where HEAP would say so: when the row needs a new HEAP block
    /// and the table is already past its row count or its memory limit. A duplicate key gives
    /// `DuplicateKey` with the first key (in key order) that has one.
    #[inline]
    pub fn write(&mut self, row: &[u8]) -> Result<Pos> {
        if !self.store.is_packed() {
            return self.write_packed(row, row);
        }
        let r = self.with_scratch(|t, s| {
            t.store.pack_plain(row, &mut s.packed)?;
            if t.def.keys.is_empty() {
                return t.write_keyless(&s.packed);
            }
            t.write_with(row, &s.packed, &mut s.new)
        });
        self.written(r)
    }

    /// A write's result, the row count published ([`Live`]), a refused block made a table
    /// that is full.
    #[inline(always)]
    fn written(&self, r: Result<Pos>) -> Result<Pos> {
        self.live.set_rows(self.store.records());
        full_if_refused(r)
    }

    /// [`write`](Self::write) of a record already packed (by [`RowFormat::pack`], which the
    /// caller runs when the record has BLOBs; `packed` is `row` when rows are not packed).
    #[inline(always)]
    pub fn write_packed(&mut self, row: &[u8], packed: &[u8]) -> Result<Pos> {
        let r = if self.def.keys.is_empty() {
            self.write_keyless(packed)
        } else {
            self.with_scratch(|t, s| t.write_with(row, packed, &mut s.new))
        };
        self.written(r)
    }

    /// A write to a table without keys (information_schema's tables): no image, no duplicate,
    /// no scratch buffer; inline in the handler's write_row.
    #[inline(always)]
    fn write_keyless(&mut self, packed: &[u8]) -> Result<Pos> {
        let (_, new_block) = self.room_for(packed)?;
        let pos = insert_row(&mut self.store, &mut self.ledger, packed, new_block)?;
        self.key_version += 1;
        Ok(pos)
    }

    /// BLOB bytes count against the memory limit (HEAP has none: its row count and blocks
    /// decide alone for tables without them).
    fn check_blob_room(&self, adding: u64) -> Result<()> {
        if self.def.limit_by == LimitBy::Heap
            && adding > 0
            && self.ledger.bytes() + self.index_length() + self.store.blob_bytes() + adding
                >= self.def.memory_limit()
        {
            return Err(Error::TableFull);
        }
        Ok(())
    }

    /// Whether `packed` may be added: the rows stored, and whether it starts a HEAP block;
    /// `TableFull` as [`write`](Self::write) says.
    #[inline(always)]
    fn room_for(&self, packed: &[u8]) -> Result<(u64, bool)> {
        if self.store.format().has_blobs() {
            self.check_blob_room(self.store.format().blob_bytes(packed)? as u64)?;
        }
        let count = self.store.records();
        let new_block = self.store.needs_new_slot() && self.ledger.starts_block(count);
        if new_block && self.full_at(count) {
            return Err(Error::TableFull);
        }
        Ok((count, new_block))
    }

    fn write_with(&mut self, row: &[u8], packed: &[u8], images: &mut Vec<Image>) -> Result<Pos> {
        let (count, new_block) = self.room_for(packed)?;
        self.fill_images(row, images)?;
        if let Some(r) = self.write_one_unique_hash(row, packed, &images[..], count, new_block) {
            return r;
        }
        self.write_general(row, packed, images, count, new_block)
    }

    /// Whether a row that needs a new HEAP block, with `count` rows stored, finds the table
    /// full: past its row count, or under [`LimitBy::Heap`] past the memory limit by HEAP's
    /// ledger. (Not cold: every table's first row asks.)
    #[inline]
    fn full_at(&self, count: u64) -> bool {
        let past_rows = self.row_limit != 0 && count > self.row_limit;
        past_rows
            || (self.def.limit_by == LimitBy::Heap
                && self.ledger.bytes() + self.index_length() >= self.def.memory_limit())
    }

    /// [`write_with`](Self::write_with) for every other table (more keys, BTREE keys,
    /// duplicates allowed, AUTO_INCREMENT): out of line, so that the usual path stays short.
    #[inline(never)]
    fn write_general(
        &mut self,
        row: &[u8],
        packed: &[u8],
        images: &[Image],
        count: u64,
        new_block: bool,
    ) -> Result<Pos> {
        // A duplicate (DISTINCT's and UNION's every repeated row) is found before anything
        // changes. HEAP finds it after taking a slot and the hash entries of the keys up to
        // that one; what that leaves behind (a free slot, the entries) is mirrored.
        for (k, img) in images.iter().enumerate() {
            if self.is_duplicate(k, img)? {
                return self.mirror_duplicate(k, packed, count, new_block);
            }
        }
        let pos = insert_row(&mut self.store, &mut self.ledger, packed, new_block)?;
        for (k, img) in images.iter().enumerate() {
            if self.def.keys[k].algorithm == Algorithm::Hash {
                self.index_ledgers[k].take_hash_entry(count);
            }
            if let Err(e) = self.add_key(k, img, row, pos, true) {
                for (j, img) in images[..k].iter().enumerate().rev() {
                    self.remove_key(j, img, row, pos)?;
                }
                self.store.delete(pos)?;
                return Err(e);
            }
        }
        if let Some(a) = self
            .def
            .auto_key
            .as_ref()
            .filter(|a| a.key < self.active_keys())
        {
            let v = a.seg.auto_increment_value(row)?;
            self.auto_increment = self.auto_increment.max(v);
        }
        self.key_version += 1;
        Ok(pos)
    }

    /// [`write_with`](Self::write_with) for the usual temporary table (GROUP BY's, DISTINCT's,
    /// UNION's): one HASH key that refuses the row's image if it is there, so one probe both
    /// finds a duplicate and places the new row. None: the table is not of that kind.
    fn write_one_unique_hash(
        &mut self,
        row: &[u8],
        packed: &[u8],
        images: &[Image],
        count: u64,
        new_block: bool,
    ) -> Option<Result<Pos>> {
        let [img] = images else {
            return None;
        };
        if self.def.auto_key.is_some() || !self.checks_duplicates(0, img) {
            return None;
        }
        let Index::Hash(hash) = &mut self.indexes[0] else {
            return None;
        };
        let rows = row_keys(&self.store, &self.def, 0).for_record(row);
        let vacancy = hash.vacancy(&img.bytes, &rows);
        let placed = vacancy.and_then(|vacancy| {
            let Some(vacancy) = vacancy else {
                return Ok(None);
            };
            let pos = insert_row(&mut self.store, &mut self.ledger, packed, new_block)?;
            self.index_ledgers[0].take_hash_entry(count);
            // The row is stored: the index takes it (only a position past what an index holds
            // is refused, and then the row goes again).
            match hash.fill_vacancy(vacancy, pos) {
                Ok(()) => Ok(Some(pos)),
                Err(e) => {
                    self.store.delete(pos)?;
                    Err(e)
                }
            }
        });
        Some(match placed {
            Ok(Some(pos)) => {
                self.key_version += 1;
                Ok(pos)
            }
            Ok(None) => self.mirror_duplicate(0, packed, count, new_block),
            Err(e) => Err(e),
        })
    }

    /// What HEAP leaves behind when key `k` refuses a row: the hash entries of the keys up to
    /// `k` and a slot it took and freed (see [`write_with`](Self::write_with)).
    fn mirror_duplicate(
        &mut self,
        k: usize,
        packed: &[u8],
        count: u64,
        new_block: bool,
    ) -> Result<Pos> {
        for j in 0..=k {
            if self.def.keys[j].algorithm == Algorithm::Hash {
                self.index_ledgers[j].take_hash_entry(count);
            }
        }
        if self.store.needs_new_slot() {
            self.store.mirror_duplicate(packed)?;
            if new_block {
                self.ledger.add_block();
            }
        }
        Err(Error::DuplicateKey(k))
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

    /// The record of row `pos` into `s.row` (its BLOBs into `s.blobs`).
    fn old_row(&self, pos: Pos, s: &mut Scratch) -> Result<()> {
        crate::alloc::resize_default(&mut s.row, self.def.rec_len)?;
        self.store.read_into(pos, &mut s.row, &mut s.blobs)
    }

    /// Replaces row `pos`. Keys whose value changes move (to the newest place among equal
    /// keys, as in HEAP); on a duplicate every key is put back and the row is unchanged.
    pub fn update(&mut self, pos: Pos, new: &[u8]) -> Result<()> {
        if !self.store.is_packed() {
            // Rows are stored as records: when no key's bytes change (GROUP BY's counters),
            // the row is overwritten in place, without copying the old one first.
            let keys = &self.def.keys[..self.active_keys()];
            let old = self.store.record_mut(pos).ok_or(Error::RecordDeleted)?;
            if old.len() != new.len() {
                return Err(Error::WrongCommand);
            }
            let same_at = |r: &Range<usize>| match (old.get(r.clone()), new.get(r.clone())) {
                (Some(a), Some(b)) => bytes_eq(a, b),
                _ => false,
            };
            let mut unchanged = self.key_bytes.iter().all(same_at);
            if !unchanged {
                // Bytes no key compares (a VARCHAR's room past its length) may differ.
                unchanged = true;
                for k in keys {
                    if !k.same_bytes(old, new)? {
                        unchanged = false;
                        break;
                    }
                }
            }
            if unchanged {
                old.copy_from_slice(new);
                return Ok(());
            }
            return self.update_packed(pos, new, new);
        }
        full_if_refused(self.with_scratch(|t, s| {
            let mut packed = std::mem::take(&mut s.packed);
            let r = t
                .store
                .pack_plain(new, &mut packed)
                .and_then(|()| t.update_with(pos, new, &packed, s));
            s.packed = packed;
            r
        }))
    }

    /// [`update`](Self::update) with the new record already packed (see
    /// [`write_packed`](Self::write_packed)).
    pub fn update_packed(&mut self, pos: Pos, new: &[u8], packed: &[u8]) -> Result<()> {
        full_if_refused(self.with_scratch(|t, s| t.update_with(pos, new, packed, s)))
    }

    fn update_with(&mut self, pos: Pos, new: &[u8], packed: &[u8], s: &mut Scratch) -> Result<()> {
        let keys = self.active_keys();
        // The old record is read for its keys only (a window function's table has none).
        if keys > 0 {
            self.old_row(pos, s)?;
        }
        if self.store.format().has_blobs() {
            let old = self.store.format().blob_bytes(self.read(pos)?)? as u64;
            let new = self.store.format().blob_bytes(packed)? as u64;
            self.check_blob_room(new.saturating_sub(old))?;
        }
        let Scratch {
            row: old,
            old: old_images,
            new: new_images,
            moved,
            ..
        } = s;
        crate::alloc::resize_default(old_images, keys)?;
        crate::alloc::resize_default(new_images, keys)?;
        moved.clear();
        // All or nothing. An index reads its keys from the rows, so a row is under one key of
        // an index at a time: for each key that changes, the old entry goes first (allocating
        // nothing), then the new one comes; the row is stored last. A failure (a duplicate, or
        // memory for an entry or the row) takes the new entries out again and puts the old
        // ones back, as the newest of their key in a HASH index, as HEAP does when it puts back
        // the keys an update had moved.
        let mut failed_at = None;
        let mut added = || -> Result<()> {
            for k in 0..keys {
                // Most updates of a temporary table (GROUP BY's counters) leave every key alone.
                if self.def.keys[k].same_bytes(old, new)? {
                    continue;
                }
                self.def.keys[k].image_of_record_into(old, &mut old_images[k])?;
                self.def.keys[k].image_of_record_into(new, &mut new_images[k])?;
                if old_images[k] == new_images[k] {
                    continue;
                }
                // The row's old entry has another image: it cannot be the duplicate.
                if self.is_duplicate(k, &new_images[k])? {
                    failed_at = Some(k);
                    // HEAP took the old entry out before it found the duplicate, and puts it
                    // back: a BTREE's tree is rebalanced for both (its shape gives the range
                    // estimates). Taking a node out frees one for it to come back in.
                    if self.def.keys[k].algorithm == Algorithm::Btree {
                        self.remove_key(k, &old_images[k], old, pos)?;
                        self.add_key(k, &old_images[k], old, pos, false)?;
                    }
                    return Err(Error::DuplicateKey(k));
                }
                moved.try_reserve(1)?;
                self.remove_key(k, &old_images[k], old, pos)?;
                if let Err(e) = self.add_key(k, &new_images[k], new, pos, true) {
                    self.add_key(k, &old_images[k], old, pos, false)?;
                    return Err(e);
                }
                moved.push(k);
            }
            self.store.update(pos, packed)
        };
        if let Err(e) = added() {
            for &k in moved.iter() {
                self.remove_key(k, &new_images[k], new, pos)?;
                self.add_key(k, &old_images[k], old, pos, false)?;
            }
            // HEAP takes the old entries out and, on a duplicate, puts them back: in a HASH
            // key the row is then the newest of its key, for the keys it had moved (above)
            // and the one that refused it.
            if let Some(k) = failed_at {
                self.indexes[k].make_newest(&old_images[k].bytes, pos);
            }
            return Err(e);
        }
        if let Some(a) = self
            .def
            .auto_key
            .as_ref()
            .filter(|a| moved.contains(&a.key))
        {
            let v = a.seg.auto_increment_value(new)?;
            self.auto_increment = self.auto_increment.max(v);
        }
        Ok(())
    }

    pub fn delete(&mut self, pos: Pos) -> Result<()> {
        let r = self.with_scratch(|t, s| t.delete_with(pos, s));
        self.live.set_rows(self.store.records());
        r
    }

    fn delete_with(&mut self, pos: Pos, s: &mut Scratch) -> Result<()> {
        self.old_row(pos, s)?;
        self.fill_images(&s.row, &mut s.old)?;
        for (k, img) in s.old.iter().enumerate() {
            self.remove_key(k, img, &s.row, pos)?;
        }
        self.store.delete(pos)?;
        self.key_version += 1;
        Ok(())
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
                for (k, img) in self.images(&row).expect("images").iter().enumerate() {
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

/// Whether `def`'s rows go back to back ([`crate::row_log::RowLog`]): an internal temporary
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
        true => crate::row_log::MIN_HOME,
        false => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(max_rows: u64, max_table_size: u64) -> TableDef {
        TableDef {
            rec_len: 15,
            max_rows,
            min_rows: 0,
            max_table_size,
            limit_by: LimitBy::Heap,
            auto_increment: 0,
            keys: Vec::new(),
            auto_key: None,
            tmp_table: false,
            format: RowFormat::default(),
            heap_lengths: true,
        }
    }

    #[test]
    fn max_records_counts_row_overhead_and_max_rows() {
        // 16 bytes a row (15 + delete marker), after the 1024-byte root node.
        assert_eq!(def(0, 1024 + 1600).max_records(), 100);
        assert_eq!(def(7, 1024 + 1600).max_records(), 7);
        assert_eq!(def(700, 1024 + 1600).max_records(), 100);
    }

    #[test]
    fn full_only_when_a_new_block_is_needed_past_the_limit() {
        // MAX_ROWS=2, but HEAP's block holds (16384 - 1056) / 16 rows, and the limit is only
        // checked when a row needs a new block.
        let mut t = Table::new(def(2, 1 << 30), 0);
        let per_block = (16384 - 1056) / 16;
        let row = [0u8; 15];
        for _ in 0..per_block {
            t.write(&row).unwrap();
        }
        assert_eq!(t.write(&row), Err(Error::TableFull));
        t.delete(3).unwrap();
        assert_eq!(t.write(&row), Ok(3));
        t.debug_check_consistency();
        t.clear();
        assert_eq!(t.records(), 0);
        assert_eq!(t.stats().data_length, 0);
        t.write(&row).unwrap();
        assert_eq!(t.stats().data_length, 16384 - 32);
        t.debug_check_consistency();
    }

    #[test]
    fn memory_limit_stops_at_a_block_boundary() {
        // HEAP compares the bytes held *before* taking a block, so under a 32 KiB limit it takes
        // a third 16 KiB block (32704 < 32768) and refuses the fourth.
        let mut t = Table::new(def(0, 2 * 16384), 0);
        let row = [0u8; 15];
        let per_block = (16384 - 1056) / 16;
        let mut n = 0;
        while t.write(&row).is_ok() {
            n += 1;
        }
        assert_eq!(n, 3 * per_block);
        t.debug_check_consistency();
    }

    #[test]
    fn packed_rows_keep_keys_positions_and_the_limit() {
        use crate::key::{KeySeg, SegKind};
        use crate::row::{VarField, VarKind};
        // [null byte][VARCHAR(20) with 1 length byte], a BTREE key on the VARCHAR.
        let seg = KeySeg {
            kind: SegKind::Binary,
            start: 1,
            length: 21,
            null: Some((0, 1)),
            reverse: false,
        };
        let def = TableDef {
            rec_len: 22,
            keys: vec![KeyDef::new(Algorithm::Btree, true, false, vec![seg], 22)],
            format: RowFormat::new(
                22,
                vec![VarField {
                    offset: 1,
                    kind: VarKind::Varchar {
                        len_bytes: 1,
                        max: 20,
                    },
                }],
            )
            .unwrap(),
            ..def(0, 1 << 20)
        };
        let rec = |s: &[u8]| {
            let mut r = vec![0, s.len() as u8];
            r.extend_from_slice(s);
            r.resize(22, 0);
            r
        };
        let mut t = Table::new(def, 0);
        for w in [&b"pear"[..], b"apple", b"fig"] {
            t.write(&rec(w)).unwrap();
        }
        assert_eq!(t.write(&rec(b"fig")), Err(Error::DuplicateKey(0)));
        t.update(0, &rec(b"a much longer pear")).unwrap();
        t.delete(1).unwrap();
        assert_eq!(t.write(&rec(b"kiwi")).unwrap(), 1);
        t.debug_check_consistency();
        let mut out = vec![0u8; 22];
        let mut blobs = Vec::new();
        t.read_into(0, &mut out, &mut blobs).unwrap();
        assert_eq!(out, rec(b"a much longer pear"));
        assert_eq!(t.read(2).unwrap().len(), 1 + 1 + 3, "stored at its length");
        // Renewed keeping its blocks: the slots', the index's and the packed rows' stay, and
        // the next rows go into them.
        let held = t.memory_bytes();
        t.renew(0, true);
        assert_eq!(t.memory_bytes(), held);
        assert_eq!(t.records(), 0);
        assert_eq!(t.write(&rec(b"plum")).unwrap(), 0, "the first slot again");
        assert_eq!(t.memory_bytes(), held, "no block taken");
        t.debug_check_consistency();
        t.clear();
        t.debug_check_consistency();
        assert_eq!(t.memory_bytes(), 0);
    }

    /// Writes rows made by `row(i)` until the table is full; the rows written.
    fn fill(t: &mut Table, row: impl Fn(u64) -> Vec<u8>) -> u64 {
        let mut n = 0;
        loop {
            match t.write(&row(n)) {
                Ok(_) => n += 1,
                Err(Error::TableFull) => return n,
                Err(e) => panic!("row {n}: {e:?}"),
            }
        }
    }

    #[test]
    fn under_actual_a_table_never_holds_more_than_its_limit() {
        let limit = 1 << 20;
        // Fixed rows with a BTREE, a unique HASH and a HASH key.
        let def3 = TableDef {
            max_table_size: limit,
            limit_by: LimitBy::Actual,
            ..crate::testing::def(false)
        };
        let mut t = Table::new(def3.clone(), 0);
        let n = fill(&mut t, |i| {
            crate::testing::rec(Some(i as i32), (i % 251) as u8, (i % 7) as u8)
        });
        assert!(t.memory_bytes() <= limit, "{} bytes", t.memory_bytes());
        eprintln!(
            "DEBUG store {} arena {} rows {}",
            t.store.bytes(),
            t.arena.bytes(),
            t.records()
        );
        // Full near the limit, not a growth step before it.
        assert!(
            t.memory_bytes() > limit * 3 / 4,
            "{} bytes",
            t.memory_bytes()
        );
        assert_eq!(t.records(), n);
        t.debug_check_consistency();
        // Under HEAP the same table fills at HEAP's row, whatever rheap holds.
        let mut h = Table::new(
            TableDef {
                limit_by: LimitBy::Heap,
                ..def3
            },
            0,
        );
        let heap_rows = fill(&mut h, |i| {
            crate::testing::rec(Some(i as i32), (i % 251) as u8, (i % 7) as u8)
        });
        assert_ne!(heap_rows, n);
        h.debug_check_consistency();
        // A refused block leaves nothing behind: the table takes rows again once some go.
        for pos in 0..100 {
            t.delete(pos).unwrap();
        }
        let again = fill(&mut t, |i| {
            crate::testing::rec(Some(-1 - i as i32), (i % 251) as u8, (i % 7) as u8)
        });
        assert!(again >= 50, "{again} rows again");
        assert!(t.memory_bytes() <= limit);
        t.debug_check_consistency();
    }

    #[test]
    fn under_actual_packed_rows_and_updates_stop_at_the_limit() {
        use crate::row::{VarField, VarKind};
        let limit = 256 << 10;
        // [null byte][VARCHAR(200) with 1 length byte], no key: rows at their length.
        let def = TableDef {
            rec_len: 202,
            max_table_size: limit,
            limit_by: LimitBy::Actual,
            format: RowFormat::new(
                202,
                vec![VarField {
                    offset: 1,
                    kind: VarKind::Varchar {
                        len_bytes: 1,
                        max: 200,
                    },
                }],
            )
            .unwrap(),
            ..def(0, 0)
        };
        let rec = |len: usize| {
            let mut r = vec![0, len as u8];
            r.resize(2 + len, b'x');
            r.resize(202, 0);
            r
        };
        let mut t = Table::new(def, 0);
        let n = 1500;
        for i in 0..n {
            t.write(&rec(10 + (i % 20) as usize)).unwrap();
        }
        // Growing rows in place finds the table full, and keeps the row that did not fit.
        let mut grown = 0;
        let refused = loop {
            match t.update(grown, &rec(200)) {
                Ok(()) => grown += 1,
                Err(Error::TableFull) => break grown,
                Err(e) => panic!("{e:?}"),
            }
            assert!(grown < n, "never full");
        };
        assert!(t.memory_bytes() <= limit, "{} bytes", t.memory_bytes());
        assert!(grown > 500, "{grown} rows grown");
        let mut out = vec![0u8; 202];
        t.read_into(refused, &mut out, &mut Vec::new()).unwrap();
        assert_eq!(out, rec(10 + (refused % 20) as usize), "the old row stays");
        // Writes find it full as well.
        assert_eq!(fill(&mut t, |_| rec(200)), 0);
        assert_eq!(t.records(), n);
        t.debug_check_consistency();
    }

    mod model {
        //! The table with a unique HASH key, a BTREE key and a non-unique HASH key, driven by
        //! random operations and checked against std collections.
        use super::*;
        use crate::index::{Find, Index};
        use crate::key::{KeySeg, SegKind};
        use proptest::prelude::*;
        use std::collections::BTreeMap;

        // Record: [null bits][a: i32][b: u8][v: VARCHAR(10)]. Key 0: UNIQUE HASH (a), a
        // nullable. Key 1: BTREE (b, a). Key 2: HASH (b). v's length follows a and b.
        fn a_seg() -> KeySeg {
            crate::key::tests::int_seg()
        }
        fn b_seg() -> KeySeg {
            KeySeg {
                kind: SegKind::Binary,
                start: 5,
                length: 1,
                null: None,
                reverse: false,
            }
        }
        fn key(algorithm: Algorithm, unique: bool, segs: Vec<KeySeg>) -> KeyDef {
            KeyDef::new(algorithm, unique, false, segs, 6)
        }
        fn table() -> Table {
            table_with_keys(3)
        }
        /// The first `n` of the keys (one: the usual temporary table's single unique key).
        fn table_with_keys(n: usize) -> Table {
            table_of(n, false)
        }
        /// The first `n` of the keys; `internal`: an internal temporary table's, which packs
        /// its rows back to back when its HASH keys are unique (`n` below 3).
        fn table_of(n: usize, internal: bool) -> Table {
            let mut keys = vec![
                key(Algorithm::Hash, true, vec![a_seg()]),
                key(Algorithm::Btree, false, vec![b_seg(), a_seg()]),
                key(Algorithm::Hash, false, vec![b_seg()]),
            ];
            keys.truncate(n);
            let format = match internal {
                false => RowFormat::default(),
                true => {
                    let v = crate::row::VarField {
                        offset: 6,
                        kind: crate::row::VarKind::Varchar {
                            len_bytes: 1,
                            max: 10,
                        },
                    };
                    RowFormat::for_table(17, vec![v], crate::row::Owner::Internal).unwrap()
                }
            };
            let def = TableDef {
                rec_len: 17,
                max_rows: 0,
                min_rows: 0,
                max_table_size: 1 << 30,
                limit_by: LimitBy::Actual,
                auto_increment: 0,
                keys,
                auto_key: None,
                tmp_table: internal,
                format,
                heap_lengths: true,
            };
            let t = Table::new(def, 0);
            assert_eq!(t.store.is_back_to_back(), internal && n < 3);
            t
        }
        fn rec(a: Option<i8>, b: u8) -> Vec<u8> {
            let mut r = vec![0u8; 17];
            match a {
                None => r[0] = 1,
                Some(a) => r[1..5].copy_from_slice(&i32::from(a).to_le_bytes()),
            }
            r[5] = b;
            let len = (usize::from(b) * 3 + a.map_or(0, |a| a.rem_euclid(5) as usize)) % 11;
            r[6] = len as u8;
            r[7..7 + len].fill(b'a' + b);
            r
        }

        #[derive(Debug, Clone)]
        enum Op {
            Insert(Option<i8>, u8),
            Update(usize, Option<i8>, u8),
            Delete(usize),
            LookupA(i8),
            LookupB(u8),
            Range(u8, u8),
            Clear,
        }

        fn op() -> impl Strategy<Value = Op> {
            let a = prop_oneof![1 => Just(None), 6 => (-8i8..8).prop_map(Some)];
            prop_oneof![
                8 => (a.clone(), 0u8..6).prop_map(|(a, b)| Op::Insert(a, b)),
                3 => (any::<usize>(), a, 0u8..6).prop_map(|(i, a, b)| Op::Update(i, a, b)),
                3 => any::<usize>().prop_map(Op::Delete),
                2 => (-8i8..8).prop_map(Op::LookupA),
                2 => (0u8..6).prop_map(Op::LookupB),
                2 => (0u8..6, 0u8..6).prop_map(|(x, y)| Op::Range(x.min(y), x.max(y))),
                1 => Just(Op::Clear),
            ]
        }

        /// The model: rows by position, and per value of b the rows in the order they got it.
        #[derive(Default)]
        struct Model {
            rows: BTreeMap<Pos, (Option<i8>, u8)>,
            by_b: BTreeMap<u8, Vec<Pos>>,
        }

        impl Model {
            fn a_taken(&self, a: Option<i8>, except: Option<Pos>) -> bool {
                a.is_some()
                    && self
                        .rows
                        .iter()
                        .any(|(&p, r)| r.0 == a && Some(p) != except)
            }
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]
            #[test]
            fn indexes_match_model(ops in proptest::collection::vec(op(), 0..200)) {
                run_model(table(), ops)?;
            }

            #[test]
            fn a_single_unique_hash_key_matches_model(
                ops in proptest::collection::vec(op(), 0..200)
            ) {
                run_model(table_with_keys(1), ops)?;
            }

            /// Rows back to back ([`crate::row_log::RowLog`]), under a unique HASH key and a
            /// BTREE key, or the first alone.
            #[test]
            fn rows_back_to_back_match_model(
                ops in proptest::collection::vec(op(), 0..200),
                keys in 1usize..=2,
            ) {
                run_model(table_of(keys, true), ops)?;
            }
        }

        /// Runs `ops` on `t` and the model; keys `t` lacks are not looked at.
        fn run_model(mut t: Table, ops: Vec<Op>) -> std::result::Result<(), TestCaseError> {
            let keys = t.def().keys.len();
            let mut m = Model::default();
            for op in ops {
                match op {
                    Op::Insert(a, b) => {
                        let r = t.write(&rec(a, b));
                        if m.a_taken(a, None) {
                            prop_assert_eq!(r, Err(Error::DuplicateKey(0)));
                        } else {
                            let p = r.unwrap();
                            m.rows.insert(p, (a, b));
                            m.by_b.entry(b).or_default().push(p);
                        }
                    }
                    Op::Update(i, a, b) if !m.rows.is_empty() => {
                        let (&p, &(oa, ob)) = m.rows.iter().nth(i % m.rows.len()).unwrap();
                        let r = t.update(p, &rec(a, b));
                        if m.a_taken(a, Some(p)) && a != oa {
                            prop_assert_eq!(r, Err(Error::DuplicateKey(0)));
                        } else {
                            r.unwrap();
                            m.rows.insert(p, (a, b));
                            if b != ob {
                                m.by_b.get_mut(&ob).unwrap().retain(|&q| q != p);
                                m.by_b.entry(b).or_default().push(p);
                            }
                        }
                    }
                    Op::Delete(i) if !m.rows.is_empty() => {
                        let (&p, &(_, b)) = m.rows.iter().nth(i % m.rows.len()).unwrap();
                        t.delete(p).unwrap();
                        m.rows.remove(&p);
                        m.by_b.get_mut(&b).unwrap().retain(|&q| q != p);
                    }
                    Op::LookupA(a) => {
                        let (def, Index::Hash(h)) = t.index(0).unwrap() else {
                            unreachable!()
                        };
                        let img = def.image_of_record(&rec(Some(a), 0)).unwrap();
                        let got: Vec<Pos> = h.lookup(&img.bytes, &t.row_keys(0)).unwrap().collect();
                        let want: Vec<Pos> = m
                            .rows
                            .iter()
                            .filter(|r| r.1 .0 == Some(a))
                            .map(|r| *r.0)
                            .collect();
                        prop_assert_eq!(got, want);
                    }
                    Op::LookupB(_) | Op::Range(..) if keys < 3 => {}
                    Op::LookupB(b) => {
                        let (def, Index::Hash(h)) = t.index(2).unwrap() else {
                            unreachable!()
                        };
                        let img = def.image_of_record(&rec(None, b)).unwrap();
                        let got: Vec<Pos> = h.lookup(&img.bytes, &t.row_keys(2)).unwrap().collect();
                        let want: Vec<Pos> = m
                            .by_b
                            .get(&b)
                            .map(|v| v.iter().rev().copied().collect())
                            .unwrap_or_default();
                        prop_assert_eq!(got, want);
                    }
                    Op::Range(lo, hi) => {
                        let (_, Index::Btree(bt)) = t.index(1).unwrap() else {
                            unreachable!()
                        };
                        // Walk from the first row with b >= lo while b <= hi.
                        let rows = t.row_keys(1);
                        let mut got = Vec::new();
                        let mut e = bt.find(&[lo], Find::KeyOrNext, &rows).unwrap();
                        while let Some(p) = e {
                            let cur = crate::index::Entry::of_row(p, &rows).unwrap();
                            if cur.image[0] > hi {
                                break;
                            }
                            got.push(p);
                            e = bt.next(cur.as_ref(), &rows).unwrap();
                        }
                        let mut want: Vec<(u8, Option<i8>, Pos)> = m
                            .rows
                            .iter()
                            .filter(|r| (lo..=hi).contains(&r.1 .1))
                            .map(|(&p, &(a, b))| (b, a, p))
                            .collect();
                        want.sort();
                        prop_assert_eq!(got, want.iter().map(|w| w.2).collect::<Vec<_>>());
                        let all = bt.records_in_range(None, None, &rows).unwrap();
                        // HEAP's estimate for an open range is one more than the rows.
                        prop_assert_eq!(all, m.rows.len() as u64 + 1);
                    }
                    Op::Clear => {
                        t.clear();
                        m = Model::default();
                    }
                    _ => {}
                }
                t.debug_check_consistency();
                prop_assert_eq!(t.records(), m.rows.len() as u64);
            }
            Ok(())
        }

        /// `op` on `t`, positions taken as the `i`-th row in scan order; what it returned.
        fn apply(t: &mut Table, op: &Op) -> String {
            let nth = |t: &Table, i: usize| {
                let rows: Vec<Pos> =
                    std::iter::successors(t.next(0), |&p| t.next(t.after(p))).collect();
                (!rows.is_empty()).then(|| rows[i % rows.len()])
            };
            match *op {
                Op::Insert(a, b) => format!("{:?}", t.write(&rec(a, b))),
                Op::Update(i, a, b) => match nth(t, i) {
                    Some(p) => format!("{:?}", t.update(p, &rec(a, b))),
                    None => String::new(),
                },
                Op::Delete(i) => match nth(t, i) {
                    Some(p) => format!("{:?}", t.delete(p)),
                    None => String::new(),
                },
                Op::LookupA(a) => match t.index(0) {
                    Ok((def, Index::Hash(h))) => {
                        let img = def.image_of_record(&rec(Some(a), 0)).unwrap();
                        let rows = t.row_keys(0);
                        format!("{:?}", h.lookup(&img.bytes, &rows).map(Vec::from_iter))
                    }
                    other => format!("{:?}", other.err()),
                },
                Op::LookupB(b) => match t.index(2) {
                    Ok((def, Index::Hash(h))) => {
                        let img = def.image_of_record(&rec(None, b)).unwrap();
                        let rows = t.row_keys(2);
                        format!("{:?}", h.lookup(&img.bytes, &rows).map(Vec::from_iter))
                    }
                    other => format!("{:?}", other.err()),
                },
                Op::Range(lo, _) => match t.index(1) {
                    Ok((_, Index::Btree(bt))) => {
                        let rows = t.row_keys(1);
                        format!("{:?}", bt.find(&[lo], Find::KeyOrNext, &rows))
                    }
                    other => format!("{:?}", other.err()),
                },
                Op::Clear => {
                    t.clear();
                    String::new()
                }
            }
        }

        /// What a table shows besides its rows (and its memory).
        fn state(t: &Table) -> String {
            format!(
                "{:?} versions {} {} {} next auto {} keys off {}",
                t.stats(),
                t.key_version(),
                t.file_version(),
                t.key_stat_version(),
                t.next_auto_increment(),
                t.indexes_disabled(),
            )
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(128))]
            /// A table used, its settings changed, then renewed, answers every operation as a
            /// new table of the same definition does.
            #[test]
            fn a_renewed_table_behaves_as_a_new_one(
                before in proptest::collection::vec(op(), 0..100),
                after in proptest::collection::vec(op(), 0..100),
                disable in any::<bool>(),
                unique in any::<Option<bool>>(),
                auto in 0u64..5,
                keep_blocks in any::<bool>(),
                internal in any::<bool>(),
            ) {
                // An internal table's rows go back to back (its HASH key unique).
                let make = || match internal {
                    true => table_of(2, true),
                    false => table(),
                };
                let mut used = make();
                for op in &before {
                    apply(&mut used, op);
                }
                if disable {
                    used.disable_indexes();
                }
                if let Some(u) = unique {
                    used.set_all_keys_unique(u);
                }
                used.reset_auto_increment(auto);
                used.bump_key_stat_version();
                let held = used.memory_bytes();
                used.renew(0, keep_blocks);
                if keep_blocks {
                    prop_assert_eq!(used.memory_bytes(), held);
                }
                let mut new = make();
                // Kept blocks are the one difference a renewed table may show.
                let state = |t: &Table| (state(t), (!keep_blocks).then(|| t.memory_bytes()));
                prop_assert_eq!(state(&used), state(&new));
                for op in &after {
                    prop_assert_eq!(apply(&mut used, op), apply(&mut new, op), "{:?}", op);
                    prop_assert_eq!(state(&used), state(&new));
                    used.debug_check_consistency();
                }
            }
        }

        #[test]
        fn a_refused_row_leaves_what_heap_leaves_with_one_key_or_more() {
            // HEAP takes a slot for a row, then frees it when a key refuses the row: the
            // single-key path (one probe) must leave the same counts as the general one.
            for keys in [1, 3] {
                let mut t = table_with_keys(keys);
                t.write(&rec(Some(1), 0)).unwrap();
                let before = t.stats();
                assert_eq!(t.write(&rec(Some(1), 1)), Err(Error::DuplicateKey(0)));
                let after = t.stats();
                assert_eq!((after.records, after.deleted), (1, 1), "{keys} keys");
                assert_eq!(after.data_length, before.data_length, "{keys} keys");
                // The freed slot is taken first.
                assert_eq!(t.write(&rec(Some(2), 0)), Ok(1), "{keys} keys");
                t.debug_check_consistency();
            }
        }
    }
}
