//! Where a table is full under `rheap_table_size_limit=HEAP` ([`LimitBy::Heap`](super::size::LimitBy::Heap)): HEAP's row
//! and memory limits, decided exactly where HEAP decides. (Under `ACTUAL`, the default, a
//! table's real bytes decide: [`crate::alloc::meter`].)
//!
//! MEMORY reports "table is full" not at MAX_ROWS but when a row needs a new block of HEAP's
//! own layout and, at that moment, either the row count is past the maximum or the bytes HEAP
//! would have allocated reach `max_heap_table_size`. Results of the server's tests depend on
//! the exact row, so rheap keeps a ledger of the blocks HEAP *would* allocate ([`HeapLedger`]),
//! independent of how rheap lays out its own memory.

/// `sizeof(HP_PTRS)`: one node of HEAP's block tree, 128 pointers.
const PTRS_NODE: u64 = 128 * 8;
/// Pointers in one node of HEAP's block tree.
const PTRS_IN_NODE: u64 = 128;
/// `MALLOC_OVERHEAD` (my_global.h).
const MALLOC_OVERHEAD: u64 = 8 + 24;
/// HEAP aims for about this many allocations up to the table's limit.
const ALLOCATION_PARTS: u64 = 16;
/// HEAP's smallest block.
const MIN_ALLOCATION_BLOCK: u64 = 16384;

/// Bytes HEAP stores per row: the record (at least a pointer, for its free list) plus a
/// one-byte delete marker, aligned to a pointer.
pub fn heap_row_size(rec_len: u64) -> u64 {
    (rec_len.max(8) + 1).next_multiple_of(8)
}

/// The most rows HEAP plans for in `memory_limit` bytes, with `index_bytes_per_row` of index
/// memory per row (`hp_rows_in_memory`).
pub fn rows_in_memory(rec_len: u64, index_bytes_per_row: u64, memory_limit: u64) -> u64 {
    let per_row = heap_row_size(rec_len) + index_bytes_per_row;
    if memory_limit < per_row + PTRS_NODE {
        return 0;
    }
    (memory_limit - PTRS_NODE) / per_row
}

/// The geometry of one of HEAP's block lists (`init_block`): how many elements a block holds
/// and how many bytes it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockGeometry {
    pub records_in_block: u64,
    /// Bytes of one element, aligned to a pointer.
    pub recbuffer: u64,
    /// Bytes of one block as HEAP requests it.
    pub alloc_size: u64,
}

impl BlockGeometry {
    pub fn new(element_len: u64, min_records: u64, max_records: u64) -> BlockGeometry {
        let recbuffer = element_len.next_multiple_of(8);
        let mut min_records = if min_records == 0 {
            1000.min(max_records / ALLOCATION_PARTS)
        } else {
            min_records
        };
        let max_records = if max_records == 0 {
            min_records.max(1000)
        } else {
            max_records
        };
        min_records = min_records.min(max_records);
        let mut records_in_block = min_records.max(max_records / ALLOCATION_PARTS);
        let extra = PTRS_NODE + MALLOC_OVERHEAD;
        if records_in_block < 10 {
            records_in_block = 10.min(max_records);
        }
        let needed = (records_in_block
            .saturating_mul(recbuffer)
            .saturating_add(extra))
        .max(MIN_ALLOCATION_BLOCK)
        .min(i32::MAX as u64);
        let pow2 = (needed as u32).next_power_of_two() as u64;
        BlockGeometry {
            records_in_block: (pow2 - extra) / recbuffer,
            recbuffer,
            alloc_size: pow2 - MALLOC_OVERHEAD,
        }
    }
}

/// Levels a [`HeapLedger`]'s pointer tree can have (HEAP's have at most 5).
const MAX_LEVELS: usize = 8;

/// The bytes HEAP would have allocated for one block list, block by block (`hp_get_new_block`):
/// each block holds `records_in_block` elements, and the tree of pointer nodes above the
/// blocks costs extra bytes when it grows a level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeapLedger {
    geometry: BlockGeometry,
    /// Free pointer slots in the last node of each tree level (level 0 is the data): the
    /// first `levels` entries. HEAP's tree has at most `HP_MAX_LEVELS + 1` = 5 levels (128^5
    /// blocks); room for more, held inline so that accounting a block never allocates.
    free_ptrs: [u64; MAX_LEVELS],
    levels: usize,
    /// Bytes allocated so far.
    bytes: u64,
}

impl HeapLedger {
    pub fn new(geometry: BlockGeometry) -> HeapLedger {
        HeapLedger {
            geometry,
            free_ptrs: [0; MAX_LEVELS],
            levels: 0,
            bytes: 0,
        }
    }

    pub fn geometry(&self) -> BlockGeometry {
        self.geometry
    }

    /// Bytes HEAP would hold for this list.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Whether element number `count` (0-based) starts a new block.
    pub fn starts_block(&self, count: u64) -> bool {
        count.is_multiple_of(self.geometry.records_in_block)
    }

    /// Accounts one more block.
    pub fn add_block(&mut self) {
        let levels = self.levels;
        let i = (0..levels)
            .find(|&l| self.free_ptrs[l] > 0)
            .unwrap_or(levels);
        let nodes = if i == levels { i as u64 } else { i as u64 - 1 };
        let len = (nodes * PTRS_NODE + self.geometry.records_in_block * self.geometry.recbuffer)
            .max(self.geometry.alloc_size);
        self.bytes += len;
        if i == levels && levels < MAX_LEVELS {
            self.free_ptrs[i] = if i == 0 { 0 } else { PTRS_IN_NODE - 1 };
            self.levels += 1;
        }
        if i > 0 && i < MAX_LEVELS {
            self.free_ptrs[i] -= 1;
            for j in 1..i {
                self.free_ptrs[j] = PTRS_IN_NODE - 1;
            }
        }
    }

    /// Forgets every block (the table was emptied): as new, keeping the list's room.
    pub fn clear(&mut self) {
        self.levels = 0;
        self.bytes = 0;
    }
}

/// `sizeof(HASH_INFO)`: one entry of a HEAP hash index.
pub const HASH_ENTRY: u64 = 24;
/// `sizeof(TREE_ELEMENT)`: one node of HEAP's red-black tree, before its key.
const TREE_ELEMENT: u64 = 24;
/// The row pointer stored after each BTREE key.
const TREE_ROW_POINTER: u64 = 8;

/// Index bytes HEAP plans per row for a key (`heap_prepare_hp_create_info`): a hash entry, or a
/// tree node with the whole key and a row pointer.
pub fn index_bytes_per_row(btree: bool, key_length: u64) -> u64 {
    if btree {
        TREE_ELEMENT + key_length + TREE_ROW_POINTER
    } else {
        HASH_ENTRY
    }
}

/// The bytes HEAP would hold for one index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexLedger {
    /// A hash index takes entries from its own block list and only gives them back when the
    /// table is emptied.
    Hash {
        ledger: HeapLedger,
        /// Entries ever taken since the table was last emptied (`last_allocated`).
        taken: u64,
    },
    /// A tree allocates each node alone and frees it with its row.
    Btree { allocated: u64 },
}

impl IndexLedger {
    pub fn hash(min_records: u64, max_records: u64) -> IndexLedger {
        IndexLedger::Hash {
            ledger: HeapLedger::new(BlockGeometry::new(HASH_ENTRY, min_records, max_records)),
            taken: 0,
        }
    }

    pub fn btree() -> IndexLedger {
        IndexLedger::Btree { allocated: 0 }
    }

    /// A hash entry is needed while the table holds `records` rows (`hp_find_free_hash`).
    pub fn take_hash_entry(&mut self, records: u64) {
        if let IndexLedger::Hash { ledger, taken } = self {
            if records >= *taken {
                if ledger.starts_block(records) {
                    ledger.add_block();
                }
                *taken = records + 1;
            }
        }
    }

    /// A tree node for a key of `packed_len` bytes was allocated (`tree_insert`).
    pub fn add_node(&mut self, packed_len: u64) {
        if let IndexLedger::Btree { allocated } = self {
            *allocated += TREE_ELEMENT + packed_len + TREE_ROW_POINTER;
        }
    }

    /// A tree node for a key of `packed_len` bytes was freed.
    pub fn remove_node(&mut self, packed_len: u64) {
        if let IndexLedger::Btree { allocated } = self {
            *allocated = allocated.saturating_sub(TREE_ELEMENT + packed_len + TREE_ROW_POINTER);
        }
    }

    pub fn bytes(&self) -> u64 {
        match self {
            IndexLedger::Hash { ledger, .. } => ledger.bytes(),
            IndexLedger::Btree { allocated } => *allocated,
        }
    }

    pub fn clear(&mut self) {
        match self {
            IndexLedger::Hash { ledger, taken } => {
                ledger.clear();
                *taken = 0;
            }
            IndexLedger::Btree { allocated } => *allocated = 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_matches_heap_for_small_tables() {
        // A 16-byte row with MAX_ROWS=3: 10 rows a block would not fill 16 KiB, so the block
        // is the 16 KiB minimum and holds (16384 - 1056) / 24 rows.
        let g = BlockGeometry::new(heap_row_size(16), 0, 3);
        assert_eq!(g.recbuffer, 24);
        assert_eq!(g.records_in_block, (16384 - 1056) / 24);
        assert_eq!(g.alloc_size, 16384 - 32);
    }

    #[test]
    fn geometry_grows_with_the_limit_and_caps_at_2_gib() {
        let small = BlockGeometry::new(24, 0, 16 * 1000);
        let large = BlockGeometry::new(24, 0, u64::MAX / 64);
        assert!(small.alloc_size < large.alloc_size);
        assert_eq!(large.alloc_size, (1u64 << 31) - 32);
    }

    #[test]
    fn ledger_pays_for_pointer_levels() {
        let g = BlockGeometry::new(24, 0, 3);
        let mut l = HeapLedger::new(g);
        for _ in 0..128 {
            l.add_block();
        }
        // The first 128 blocks fit one pointer node, whose bytes are inside alloc_size.
        assert_eq!(l.bytes(), 128 * g.alloc_size);
        // Block 129 adds a level and a node below it: two extra nodes, past alloc_size.
        l.add_block();
        assert_eq!(
            l.bytes(),
            128 * g.alloc_size
                + (2 * PTRS_NODE + g.records_in_block * g.recbuffer).max(g.alloc_size)
        );
        l.clear();
        assert_eq!(l.bytes(), 0);
    }

    #[test]
    fn rows_in_memory_leaves_room_for_the_root_node() {
        assert_eq!(rows_in_memory(16, 0, 1024 + 24 * 10), 10);
        assert_eq!(rows_in_memory(16, 0, 100), 0);
    }
}
