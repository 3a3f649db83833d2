//! Internal temporary tables used again. A statement that makes a temporary table usually makes
//! one of the same definition as the statement before it; building a table (its definition's
//! keys and collations, its row store, indexes and arena) and dropping it cost more than the
//! rows most of these tables hold. So a closed internal table is emptied ([`Table::renew`]:
//! exactly what a new one is) and kept in a small per-CPU [`Pool`], under the key of the shim
//! definition it was built from ([`Shape`]); the next open with an equal definition takes it
//! instead of building one. A small table keeps its blocks too, counted as cached: the next
//! statement's rows go where this one's were, with no trip through the block cache.
//!
//! [`Table::renew`]: crate::table::Table::renew

pub use crate::recycle::shape::Shape;

pub(crate) mod pool;
pub mod shape;

use crate::catalog::share::Internal;
use crate::recycle::pool::Pool;
use crate::status::{self, Counter};

/// Tables kept per CPU: room for the shapes a mix of statements cycles through, so that a
/// statement coming back after others finds its table still kept. The benchmark's five
/// workloads, in turns of 50 ms at 16 clients, built 224 tables in four rounds and kept them
/// all (a SHOW's shape, a GROUP BY's and a DISTINCT's per table, a derived UNION's two per
/// table, some more than once for statements running at once). With 64 per CPU the other
/// workloads pushed out every SHOW TABLE STATUS table between two of its turns, and each turn
/// began by building up to 13 again. The blocks kept tables hold count against the block cache's bound
/// (`rheap_block_cache_size`), however many tables are kept.
const PER_CPU: usize = 256;

/// The most bytes of blocks a kept table keeps (a few dozen rows and their index); a table
/// that held more gives them all back to the cache.
const KEEP_BLOCKS_UP_TO: u64 = 64 << 10;

static POOL: Pool<Box<Internal>> = Pool::new(PER_CPU);

/// A kept table built from a definition with `key`, open again as a new table.
pub fn take(key: &Shape) -> Option<Box<Internal>> {
    let mut t = POOL.take(key.tag(), |t| t.built_from(key))?;
    t.revive();
    Some(t)
}

/// A closing internal table: kept for reuse when it can serve again, else dropped.
pub fn give(mut t: Box<Internal>) {
    if let Some(tag) = t.retire(KEEP_BLOCKS_UP_TO) {
        // The one pushed out, if any, is dropped here, after the pool's lock.
        drop(POOL.give(tag, t));
    }
}

/// Drops every kept table (plugin deinit, before the block cache lets its blocks go).
pub fn release_all() {
    drop(POOL.drain());
}

/// Counter `c` as `SHOW STATUS` shows it. A kept table is not live, and its last use's rows
/// were written, but it changes the counters only when it serves again or goes
/// ([`Internal::retire`]): here, kept tables are taken out of `Rheap_tables_live` and their
/// rows added to `Rheap_rows_written`. (While a table moves between a handler and the pool, or
/// is pushed out and not yet dropped, it briefly counts as live and its rows are missing.)
/// `Rheap_heap_used` is the heap's own count ([`crate::alloc::heap::used`]).
pub fn counter(c: Counter) -> u64 {
    let n = status::get(c);
    match c {
        Counter::TablesLive => n.saturating_sub(POOL.len() as u64),
        Counter::RowsWritten => POOL.fold(n, |n, t| n.wrapping_add(t.rows_written)),
        Counter::HeapUsed => crate::alloc::heap::used(),
        _ => n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{self, counters_lock, rec, shape_of};

    fn internal(key: Option<Shape>, rows_written: u64) -> Box<Internal> {
        let mut t = Box::new(Internal::new(testing::table(true), key));
        t.rows_written = rows_written;
        t
    }

    #[test]
    fn a_table_given_is_taken_by_an_equal_key_only() {
        let _g = counters_lock();
        let (k, other) = (shape_of("recycle-take", 0), shape_of("recycle-take", 1));
        let live = counter(Counter::TablesLive);
        let rows = counter(Counter::RowsWritten);
        let reused = status::get(Counter::InternalTablesReused);
        let t = internal(Some(k.clone()), 4);
        let at: *const Internal = &*t;
        assert_eq!(counter(Counter::TablesLive), live + 1);
        give(t);
        assert_eq!(counter(Counter::TablesLive), live, "kept is not live");
        assert_eq!(
            counter(Counter::RowsWritten),
            rows + 4,
            "its rows were written"
        );
        assert_eq!(
            status::get(Counter::RowsWritten),
            rows,
            "not yet in the slot"
        );
        assert!(take(&other).is_none());
        assert_eq!(status::get(Counter::InternalTablesReused), reused);
        let t = take(&k).expect("kept");
        assert_eq!(&*t as *const Internal, at, "the same table");
        assert_eq!(status::get(Counter::InternalTablesReused), reused + 1);
        assert_eq!(
            status::get(Counter::RowsWritten),
            rows + 4,
            "counted when it serves"
        );
        assert_eq!(t.rows_written, 0);
        assert_eq!(counter(Counter::TablesLive), live + 1);
        assert!(take(&k).is_none(), "taken once");
        drop(t);
        assert_eq!(counter(Counter::TablesLive), live);
        assert_eq!(
            counter(Counter::RowsWritten),
            rows + 4,
            "and not again when it goes"
        );
        // Counters kept tables do not change go through.
        assert_eq!(
            counter(Counter::InternalTablesConverted),
            status::get(Counter::InternalTablesConverted)
        );
    }

    #[test]
    fn tables_that_cannot_serve_again_are_dropped() {
        let _g = counters_lock();
        let live = counter(Counter::TablesLive);
        let rows = counter(Counter::RowsWritten);
        give(internal(None, 2));
        assert_eq!(status::get(Counter::TablesLive), live, "no key: dropped");
        assert_eq!(status::get(Counter::RowsWritten), rows + 2);
        // A table poisoned by a panic while it was changed.
        let k = shape_of("recycle-poisoned", 0);
        let mut open: crate::catalog::share::Open<()> =
            crate::catalog::share::Open::Internal(internal(Some(k.clone()), 0));
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut t = open.write().unwrap();
            t.write(&rec(Some(1), 0, 0)).unwrap();
            panic!("while writing");
        }));
        assert!(r.is_err());
        let crate::catalog::share::Open::Internal(t) = open else {
            unreachable!()
        };
        give(t);
        assert_eq!(status::get(Counter::TablesLive), live, "poisoned: dropped");
        assert!(take(&k).is_none());
    }

    #[test]
    fn release_all_drops_every_kept_table() {
        let _g = counters_lock();
        let live = status::get(Counter::TablesLive) - POOL.len() as u64;
        let rows = counter(Counter::RowsWritten);
        let keys: Vec<Shape> = (0..3).map(|i| shape_of("recycle-release", i)).collect();
        for k in &keys {
            give(internal(Some(k.clone()), 1));
            give(internal(Some(k.clone()), 1));
        }
        assert!(POOL.len() >= 6);
        assert_eq!(counter(Counter::TablesLive), live);
        assert_eq!(counter(Counter::RowsWritten), rows + 6);
        release_all();
        assert!(POOL.is_empty());
        assert_eq!(status::get(Counter::TablesLive), live);
        assert_eq!(status::get(Counter::RowsWritten), rows + 6);
        assert!(keys.iter().all(|k| take(k).is_none()));
    }
}
