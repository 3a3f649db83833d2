//! A table's meter: the bytes of every block its structures hold (row slots, packed rows, index
//! pieces, large hash arrays), counted once, and the limit they may not pass.
//!
//! Under `rheap_table_size_limit=ACTUAL` the limit is the table's own (`max_heap_table_size`,
//! or what the server allows an internal table): a block that would take the table past it is
//! refused, the write that needed it finds the table full ([`super::refusal`]), and so the
//! bytes a table holds are never more than its limit. A block that does not fit is first
//! tried smaller, down to what the request needs, so that "full" comes close to the limit and
//! not a whole growth step before it. The first block of an empty table is never refused: a
//! table can always hold a row, as in HEAP.
//!
//! Every structure of one table holds a clone; the table changes under its write lock, and
//! reads of the count (SHOW TABLE STATUS, `information_schema.RHEAP_TABLES`) need no lock.

use super::cache;
use super::fallible::try_arc;
use super::policy::MIN_BLOCK;
use super::system::RawBlock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// What a block holds, counted apart for SHOW TABLE STATUS and `RHEAP_TABLES`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// Row slots and packed rows (DATA_LENGTH).
    Rows = 0,
    /// Index structures: hash tables, tree nodes, key images (INDEX_LENGTH).
    Index = 1,
}

/// The count and limit of one table's blocks, for one [`Part`]; clones share them.
#[derive(Clone, Debug)]
pub struct Meter {
    shared: Arc<Shared>,
    part: Part,
}

#[derive(Debug)]
struct Shared {
    /// Bytes of each part's blocks.
    bytes: [AtomicU64; 2],
    blocks: AtomicU64,
    /// 0: none. Fixed when the table is made.
    limit: u64,
}

impl Meter {
    fn of(shared: Arc<Shared>) -> Meter {
        Meter {
            shared,
            part: Part::Rows,
        }
    }

    fn shared(limit: u64) -> Shared {
        Shared {
            bytes: [AtomicU64::new(0), AtomicU64::new(0)],
            blocks: AtomicU64::new(0),
            limit,
        }
    }

    /// A meter with a limit of `limit` bytes (0: none), counting [`Part::Rows`], or
    /// `OutOfMemory`.
    pub fn try_new(limit: u64) -> crate::error::Result<Meter> {
        Ok(Meter::of(try_arc(Meter::shared(limit))?))
    }

    /// A meter without a limit, for structures used on their own (tests, tools); panics when
    /// out of memory.
    pub fn unlimited() -> Meter {
        Meter::of(Arc::new(Meter::shared(0)))
    }

    /// The same count and limit, its blocks counted as `part`.
    pub fn for_part(&self, part: Part) -> Meter {
        Meter {
            shared: self.shared.clone(),
            part,
        }
    }

    /// Bytes of the blocks held, every part.
    pub fn bytes(&self) -> u64 {
        self.part_bytes(Part::Rows) + self.part_bytes(Part::Index)
    }

    /// Bytes of the blocks held for `part`.
    pub fn part_bytes(&self, part: Part) -> u64 {
        self.shared.bytes[part as usize].load(Ordering::Relaxed)
    }

    /// Blocks held, every part.
    pub fn blocks(&self) -> u64 {
        self.shared.blocks.load(Ordering::Relaxed)
    }

    /// The limit (0: none).
    pub fn limit(&self) -> u64 {
        self.shared.limit
    }

    fn count(&self, bytes: usize, more: bool) {
        let (counter, blocks) = (&self.shared.bytes[self.part as usize], &self.shared.blocks);
        if more {
            counter.fetch_add(bytes as u64, Ordering::Relaxed);
            blocks.fetch_add(1, Ordering::Relaxed);
        } else {
            counter.fetch_sub(bytes as u64, Ordering::Relaxed);
            blocks.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// The size of the block to take for a request of `wanted` bytes that needs at least
    /// `at_least`: `wanted` when it fits under the limit, else the largest power of two (a
    /// cacheable size) that fits and holds `at_least`; None when none does.
    fn admitted(&self, wanted: usize, at_least: usize) -> Option<usize> {
        let (bytes, limit) = (self.bytes(), self.limit());
        if limit == 0 || bytes == 0 || bytes.saturating_add(wanted as u64) <= limit {
            return Some(wanted);
        }
        let room = usize::try_from(limit.saturating_sub(bytes)).unwrap_or(usize::MAX);
        let smaller = match room {
            0 => return None,
            r => 1usize << (usize::BITS - 1 - r.leading_zeros()),
        };
        // `smaller` is below `wanted`: the room is.
        (smaller >= at_least.max(MIN_BLOCK)).then_some(smaller)
    }

    /// A block of `wanted` bytes (or smaller, see [`Meter`]) holding at least `at_least`, from
    /// the server's cache; None when the table's limit or the server-wide budget
    /// ([`super::budget`]) refuses it (noted for the write, [`super::refusal`]) or no memory
    /// can be had.
    ///
    /// Neither refuses the first block of a table that holds none: a table can always hold a
    /// row, as in HEAP. The server relies on that: a recursive CTE whose one-row increment
    /// table is found full loses that row when the server moves the table to disk (MDEV-40803).
    pub fn take(&self, wanted: usize, at_least: usize) -> Option<RawBlock> {
        let Some(size) = self.admitted(wanted, at_least) else {
            super::refusal::note();
            return None;
        };
        if self.bytes() != 0 && !super::budget::admits(size) {
            return None;
        }
        let block = cache::take(size)?;
        self.count(block.size(), true);
        Some(block)
    }

    /// A block of `wanted` bytes whatever the table's limit and the server-wide budget say:
    /// for an update of an internal temporary table's row that no longer fits where it is
    /// ([`crate::rows::log::RowLog::update`]).
    /// HEAP's rows are fixed, so its updates never need room, and the server does not move a
    /// table to disk for an update (it fails the statement): the row gets its room, and the
    /// table, now past its limit, is full at its next write, which the server does move.
    /// None only when no memory can be had.
    pub fn take_past_limit(&self, wanted: usize) -> Option<RawBlock> {
        let block = cache::take(wanted)?;
        self.count(block.size(), true);
        Some(block)
    }

    /// Gives a block back to the server's cache.
    pub fn give(&self, block: RawBlock) {
        self.count(block.size(), false);
        cache::give(block);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_counted_and_refused_past_the_limit() {
        let m = Meter::try_new(20_000).unwrap();
        // The first block is never refused, whatever its size.
        let a = m.take(32_768, 32_768).unwrap();
        assert_eq!(m.bytes(), 32_768);
        assert!(m.take(1024, 8).is_none(), "past the limit");
        assert!(crate::alloc::refusal::take());
        m.give(a);
        assert_eq!(m.bytes(), 0);
        let a = m.take(8192, 8).unwrap();
        // 16 KiB wanted, 11,808 bytes of room: an 8 KiB block instead.
        let b = m.take(16_384, 100).unwrap();
        assert_eq!(b.size(), 8192);
        assert_eq!(m.bytes(), 16_384);
        // 3,616 bytes of room hold a 2 KiB block, not one of 4 KiB.
        assert!(m.take(4096, 4096).is_none());
        assert!(crate::alloc::refusal::take());
        let c = m.take(4096, 100).unwrap();
        assert_eq!(c.size(), 2048);
        assert!(m.bytes() <= 20_000);
        // Index blocks count apart, under the same limit.
        let index = m.for_part(Part::Index);
        assert!(index.take(4096, 2048).is_none());
        assert!(crate::alloc::refusal::take());
        let d = index.take(4096, 8).unwrap();
        assert_eq!(d.size(), 1024);
        assert_eq!(
            (
                m.part_bytes(Part::Rows),
                m.part_bytes(Part::Index),
                m.blocks()
            ),
            (18_432, 1024, 4)
        );
        for b in [a, b, c] {
            m.give(b);
        }
        index.give(d);
        assert_eq!((m.bytes(), m.blocks()), (0, 0));
    }

    #[test]
    fn the_budget_refuses_growth_but_not_a_tables_first_block() {
        let _g = crate::testing::counters_lock();
        // A budget of one byte: nothing more fits once this table holds a block.
        super::super::budget::set_thread_limit(Some(1));
        let m = Meter::unlimited();
        let first = m.take(4096, 8).expect("a table's first block");
        assert!(m.take(4096, 8).is_none(), "growth past the budget");
        assert!(crate::alloc::refusal::take());
        super::super::budget::set_thread_limit(None);
        let second = m.take(4096, 8).unwrap();
        m.give(first);
        m.give(second);
        assert_eq!(m.bytes(), 0);
    }

    #[test]
    fn no_limit_admits_everything() {
        let m = Meter::unlimited();
        let blocks: Vec<_> = (0..4).map(|_| m.take(1 << 20, 1).unwrap()).collect();
        assert_eq!(m.bytes(), 4 << 20);
        blocks.into_iter().for_each(|b| m.give(b));
        assert_eq!(m.bytes(), 0);
        assert!(!crate::alloc::refusal::take());
    }
}
