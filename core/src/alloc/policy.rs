//! How big a table's blocks are: small at first, each one larger, up to a cap.
//!
//! HEAP sizes every block of a table from its limit (`max_heap_table_size`, `tmp_table_size`),
//! so a server tuned with 16G gives each temporary table a first block of hundreds of MB. rheap
//! sizes the first block from what the table is expected to hold now: a few rows (or MIN_ROWS,
//! clamped to the rows the table can ever hold), then doubles each block up to [`MAX_BLOCK`].
//! Every size is a power of two, so freed blocks of one table fit the next table
//! ([`super::cache`]).

/// The largest block: tables that grow past it take more blocks of this size. A large table's
/// last block is half empty on average, so the cap bounds the bytes it holds unused: 1 MiB
/// (MySQL's TempTable's block size). With 4 MiB, the large benchmark's GROUP BY and DISTINCT at
/// 16M held 2 MiB more in their two tables (docs/benchmark.md).
pub const MAX_BLOCK: usize = 1 << 20;
/// The smallest block.
pub const MIN_BLOCK: usize = 1 << 10;
/// Elements the first block holds when nothing else is known.
const FIRST_ELEMENTS: u64 = 4;

/// The sizes of one structure's successive blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Growth {
    next: usize,
}

impl Growth {
    /// Blocks for elements of `element` bytes. `planned` elements (MIN_ROWS, 0 when not
    /// given) size the first block up to `limit` bytes (what the table may ever hold) and
    /// [`MAX_BLOCK`]; never beyond.
    pub fn new(element: usize, planned: u64, limit: u64) -> Growth {
        let element = element.max(1) as u64;
        let wanted = element
            .saturating_mul(planned.max(FIRST_ELEMENTS))
            .min(limit.max(element))
            .min(MAX_BLOCK as u64) as usize;
        Growth {
            next: round(wanted.max(MIN_BLOCK)),
        }
    }

    /// The size of the next block, which must hold at least `at_least` bytes; later blocks are
    /// twice as large, up to [`MAX_BLOCK`].
    pub fn next_block(&mut self, at_least: usize) -> usize {
        let size = self.next.max(round(at_least));
        self.next = (size.saturating_mul(2)).min(MAX_BLOCK).max(self.next);
        size
    }
}

/// `n` rounded up to a power of two (sizes past [`MAX_BLOCK`] too, so they are cacheable
/// classes only up to the cap).
fn round(n: usize) -> usize {
    n.checked_next_power_of_two().unwrap_or(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(mut g: Growth, n: usize) -> Vec<usize> {
        (0..n).map(|_| g.next_block(0)).collect()
    }

    #[test]
    fn first_block_is_small_whatever_the_limit() {
        // A 100-byte row in a table allowed 16G: 4 rows, at least 1 KiB.
        assert_eq!(sizes(Growth::new(100, 0, 16 << 30), 1), [1024]);
        // A 3000-byte row (information_schema.STATISTICS-like): 4 rows round up to 16 KiB.
        assert_eq!(sizes(Growth::new(3000, 0, 16 << 30), 1), [16384]);
    }

    #[test]
    fn blocks_double_up_to_the_cap() {
        let s = sizes(Growth::new(100, 0, u64::MAX), 16);
        assert_eq!(&s[..4], [1024, 2048, 4096, 8192]);
        assert!(s.windows(2).all(|w| w[1] == (w[0] * 2).min(MAX_BLOCK)));
        assert_eq!(*s.last().unwrap(), MAX_BLOCK);
    }

    #[test]
    fn min_rows_presizes_but_never_past_the_limit_or_the_cap() {
        // MIN_ROWS=1000 of 100 bytes: 100,000 bytes -> 128 KiB.
        assert_eq!(sizes(Growth::new(100, 1000, 16 << 30), 1), [131072]);
        // MIN_ROWS=4294967295: capped.
        assert_eq!(
            sizes(Growth::new(100, 4_294_967_295, 16 << 30), 1),
            [MAX_BLOCK]
        );
        // ... and a table limited to 20,000 bytes never gets more than that, rounded.
        assert_eq!(sizes(Growth::new(100, 4_294_967_295, 20_000), 1), [32768]);
    }

    #[test]
    fn an_element_larger_than_the_next_block_gets_a_block_that_fits() {
        let mut g = Growth::new(8, 0, u64::MAX);
        assert_eq!(g.next_block(5000), 8192);
        assert_eq!(g.next_block(0), 16384);
        let mut g = Growth::new(8, 0, u64::MAX);
        assert_eq!(
            g.next_block(MAX_BLOCK + 1),
            (MAX_BLOCK + 1).next_power_of_two()
        );
        assert_eq!(g.next_block(0), MAX_BLOCK);
    }
}
