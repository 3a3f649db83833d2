//! One RHEAP table: its definition, its rows and its counters.

use crate::error::{Error, Result};
use crate::limits::{heap_row_size, rows_in_memory, BlockGeometry, HeapLedger};
use crate::records::{Pos, RecordStore};

/// What a table is created from (see `rheap_table_def` in the shim header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableDef {
    /// Bytes of one row in the server's record format.
    pub rec_len: usize,
    /// MAX_ROWS, 0 when not given.
    pub max_rows: u64,
    /// MIN_ROWS, 0 when not given.
    pub min_rows: u64,
    /// `max_heap_table_size` of the creating thread.
    pub max_table_size: u64,
    /// AUTO_INCREMENT= of CREATE TABLE, 0 when not given.
    pub auto_increment: u64,
}

impl TableDef {
    /// The memory limit HEAP applies (never below one pointer node).
    pub fn memory_limit(&self) -> u64 {
        self.max_table_size.max(1024)
    }

    /// The most rows the table plans for, as HEAP computes it: what fits in the memory limit,
    /// lowered to MAX_ROWS when that is given.
    pub fn max_records(&self) -> u64 {
        let by_memory = rows_in_memory(self.rec_len as u64, 0, self.memory_limit());
        match self.max_rows {
            0 => by_memory,
            m => m.min(by_memory),
        }
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
    store: RecordStore,
    max_records: u64,
    /// The bytes HEAP would hold for these rows: decides "table is full".
    ledger: HeapLedger,
    create_time: i64,
    /// The next AUTO_INCREMENT value to hand out.
    auto_increment: u64,
}

impl Table {
    pub fn new(def: TableDef, create_time: i64) -> Table {
        let max_records = def.max_records();
        let geometry =
            BlockGeometry::new(heap_row_size(def.rec_len as u64), def.min_rows, max_records);
        Table {
            store: RecordStore::new(def.rec_len),
            max_records,
            ledger: HeapLedger::new(geometry),
            auto_increment: def.auto_increment.max(1),
            create_time,
            def,
        }
    }

    pub fn def(&self) -> &TableDef {
        &self.def
    }

    pub fn records(&self) -> u64 {
        self.store.records()
    }

    /// Adds a row; `TableFull` where HEAP would say so: when the row needs a new HEAP block
    /// and the table is already past its row count or its memory limit.
    pub fn write(&mut self, row: &[u8]) -> Result<Pos> {
        let count = self.store.records();
        let new_block = self.store.needs_new_slot() && self.ledger.starts_block(count);
        if new_block {
            let past_rows = self.max_records != 0 && count > self.max_records;
            if past_rows || self.ledger.bytes() >= self.def.memory_limit() {
                return Err(Error::TableFull);
            }
        }
        let pos = self.store.insert(row)?;
        if new_block {
            self.ledger.add_block();
        }
        Ok(pos)
    }

    pub fn read(&self, pos: Pos) -> Result<&[u8]> {
        self.store.get(pos).ok_or(Error::RecordDeleted)
    }

    pub fn update(&mut self, pos: Pos, row: &[u8]) -> Result<()> {
        self.store.update(pos, row)
    }

    pub fn delete(&mut self, pos: Pos) -> Result<()> {
        self.store.delete(pos)
    }

    /// The first row at or after `from`, in scan order.
    pub fn next(&self, from: Pos) -> Option<Pos> {
        self.store.next_live(from)
    }

    /// Removes every row (DELETE without WHERE, TRUNCATE).
    pub fn clear(&mut self) {
        self.store.clear();
        self.ledger.clear();
    }

    pub fn stats(&self) -> Stats {
        let rec_len = self.def.rec_len as u64;
        Stats {
            records: self.store.records(),
            deleted: self.store.deleted(),
            data_length: self.ledger.bytes(),
            index_length: 0,
            max_data_length: self.max_records.saturating_mul(rec_len),
            delete_length: self.store.deleted() * rec_len,
            rec_len,
            create_time: self.create_time,
            auto_increment: self.auto_increment,
        }
    }

    pub fn debug_check_consistency(&self) {
        self.store.debug_check_consistency();
        let g = self.ledger.geometry();
        let blocks = self.store.slots().div_ceil(g.records_in_block);
        assert!(
            self.ledger.bytes() >= blocks * g.alloc_size,
            "the ledger covers every slot"
        );
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
            auto_increment: 0,
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
}
