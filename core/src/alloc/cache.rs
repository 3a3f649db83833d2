//! Freed blocks kept for the next table, so that a statement that creates and drops a small
//! temporary table takes its memory from here rather than from the system.
//!
//! One cache for the whole server, bounded in bytes by `rheap_block_cache_size`. It holds blocks
//! of the power-of-two sizes [`super::policy`] hands out, one list per size; a block that does
//! not fit under the bound goes back to the system at once.
//!
//! The cache is split in shards, one per CPU of the process ([`PerCpu`]): a block freed
//! on a CPU goes to that CPU's shard and is taken again by the next table made there, while its
//! bytes are still in that CPU's caches, as a thread's own malloc arena gives HEAP's blocks back
//! to it. A shard with nothing of a size lends from the others before the system is asked. Each
//! shard is a short mutex hold (a pop or a push), and CPUs do not share one.
//!
//! An emptied internal table kept for the next statement ([`crate::recycle`]) may keep its few
//! blocks rather than give them here and take them back: it claims their bytes under the
//! bound ([`BlockCache::claim`]), and they count as cached until the table serves again.

use super::policy::{MAX_BLOCK, MIN_BLOCK};
use super::system::{self, RawBlock};
use crate::cpu::{Padded, PerCpu, MAX_PARTS};
use crate::status::{self, Counter};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Power-of-two sizes from MIN_BLOCK to MAX_BLOCK, one list each.
const CLASSES: usize = (MAX_BLOCK.trailing_zeros() - MIN_BLOCK.trailing_zeros() + 1) as usize;

/// The default bound (`rheap_block_cache_size`).
pub const DEFAULT_LIMIT: u64 = 16 << 20;

struct Pool {
    lists: [Vec<RawBlock>; CLASSES],
}

/// A cache of free blocks. The server's is [`CACHE`]; tests make their own.
pub struct BlockCache {
    shards: PerCpu<Mutex<Pool>>,
    /// Bytes in every shard's blocks and in claimed ones (what the bound holds to).
    bytes: AtomicU64,
    /// Bytes of blocks claimed for kept tables ([`BlockCache::claim`]).
    claimed: AtomicU64,
    /// The bound, on cache lines of its own: `bytes` changes with every block taken or given,
    /// from every CPU, while the bound is only read.
    bound: Padded<Bound>,
    /// Whether this is the server's cache, whose counters are the status variables.
    counted: bool,
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache")
            .field("bytes", &self.cached_bytes())
            .finish()
    }
}

/// The bound, and how many times it was set.
#[derive(Debug)]
struct Bound {
    limit: AtomicU64,
    changes: AtomicU64,
}

/// The server's cache.
pub static CACHE: BlockCache = BlockCache::new(DEFAULT_LIMIT, true);

/// What the server's cache and the tables hold, for `SHOW STATUS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    /// Bytes in blocks that tables hold.
    pub in_use: u64,
    /// The most `in_use` has been.
    pub peak: u64,
    /// Bytes in cached blocks.
    pub cached: u64,
    /// Blocks ever taken from the system.
    pub system_blocks: u64,
    /// Blocks taken from the cache, and blocks the cache could not give.
    pub hits: u64,
    pub misses: u64,
}

pub fn stats() -> Stats {
    Stats {
        in_use: status::get(Counter::MemoryUsed),
        peak: status::get(Counter::MemoryUsedPeak),
        cached: status::get(Counter::BlockCacheBytes),
        system_blocks: status::get(Counter::BlocksAllocated),
        hits: status::get(Counter::BlockCacheHits),
        misses: status::get(Counter::BlockCacheMisses),
    }
}

/// A block of `size` bytes for a table, from the server's cache ([`BlockCache::take`]).
pub fn take(size: usize) -> Option<RawBlock> {
    CACHE.take(size)
}

/// Gives a table's block back to the server's cache ([`BlockCache::give`]).
pub fn give(block: RawBlock) {
    CACHE.give(block)
}

fn class(size: usize) -> Option<usize> {
    (size.is_power_of_two() && (MIN_BLOCK..=MAX_BLOCK).contains(&size))
        .then(|| (size.trailing_zeros() - MIN_BLOCK.trailing_zeros()) as usize)
}

impl BlockCache {
    pub const fn new(limit: u64, counted: bool) -> BlockCache {
        BlockCache {
            shards: PerCpu::new(
                [const {
                    Padded(Mutex::new(Pool {
                        lists: [const { Vec::new() }; CLASSES],
                    }))
                }; MAX_PARTS],
            ),
            bytes: AtomicU64::new(0),
            claimed: AtomicU64::new(0),
            bound: Padded(Bound {
                limit: AtomicU64::new(limit),
                changes: AtomicU64::new(0),
            }),
            counted,
        }
    }

    /// Shard `i`, locked.
    fn lock(&self, i: usize) -> std::sync::MutexGuard<'_, Pool> {
        // Nothing panics while a shard is held (pushes reserve first); a poisoned shard is
        // still a valid one.
        self.shards.get(i).lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Moves the server's counters (a test's cache has none).
    fn count(&self, changes: &[(Counter, i64)]) {
        if self.counted {
            status::change(changes);
        }
    }

    /// Raises `Rheap_memory_used_peak` to what `Rheap_memory_used` is now, after it grew.
    fn raise_peak(&self) {
        if self.counted {
            status::raise_peak(status::get(Counter::MemoryUsed));
        }
    }

    /// A block of `size` bytes for a table: from the cache if it has one, else from the
    /// system. None when the system has no memory (or the test switch says so).
    pub fn take(&self, size: usize) -> Option<RawBlock> {
        if !system::may_take_block() {
            return None;
        }
        let cached = class(size).and_then(|c| {
            // This CPU's shard first, then the others in use.
            let (here, n) = (self.shards.here(), self.shards.in_use());
            (here..here + n).find_map(|i| {
                let mut pool = self.lock(i % n);
                let b = pool.lists[c].pop()?;
                self.bytes.fetch_sub(size as u64, Ordering::Relaxed);
                Some(b)
            })
        });
        let bytes = size as i64;
        let block = match cached {
            Some(b) => {
                self.count(&[
                    (Counter::BlockCacheBytes, -bytes),
                    (Counter::BlockCacheHits, 1),
                    (Counter::MemoryUsed, bytes),
                ]);
                b
            }
            None => {
                let b = RawBlock::alloc(size);
                self.count(&[
                    (Counter::BlockCacheMisses, 1),
                    (Counter::MemoryUsed, if b.is_some() { bytes } else { 0 }),
                ]);
                b?
            }
        };
        self.raise_peak();
        Some(block)
    }

    /// Claims `bytes` under the bound: false, and nothing claimed, when they do not fit. Room
    /// is claimed before anything is kept, so that shards and kept tables never exceed the
    /// bound together.
    fn room_for(&self, bytes: u64) -> bool {
        if self.bytes.fetch_add(bytes, Ordering::Relaxed) + bytes > self.limit() {
            self.bytes.fetch_sub(bytes, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// Takes back a block a table no longer needs: cached while the cache stays within its
    /// bound, else returned to the system.
    pub fn give(&self, block: RawBlock) {
        let size = block.size() as u64;
        let rejected = match class(block.size()) {
            Some(c) => {
                let mut pool = self.lock(self.shards.here());
                if !self.room_for(size) {
                    Some(block)
                } else if pool.lists[c].try_reserve(1).is_ok() {
                    pool.lists[c].push(block);
                    None
                } else {
                    self.bytes.fetch_sub(size, Ordering::Relaxed);
                    Some(block)
                }
            }
            None => Some(block),
        };
        let bytes = size as i64;
        match rejected {
            Some(b) => {
                self.count(&[(Counter::MemoryUsed, -bytes)]);
                b.free()
            }
            None => self.count(&[
                (Counter::MemoryUsed, -bytes),
                (Counter::BlockCacheBytes, bytes),
            ]),
        }
    }

    /// Claims room under the bound for `bytes` of blocks that stay with an emptied table kept
    /// for reuse ([`crate::recycle`]): they count as cached (`Rheap_block_cache_bytes`) rather
    /// than as held by a table, until [`unclaim`](Self::unclaim). False, and nothing claimed,
    /// when the bound has no room.
    pub fn claim(&self, bytes: u64) -> bool {
        if !self.room_for(bytes) {
            return false;
        }
        self.claimed.fetch_add(bytes, Ordering::Relaxed);
        self.count(&[
            (Counter::MemoryUsed, -(bytes as i64)),
            (Counter::BlockCacheBytes, bytes as i64),
        ]);
        true
    }

    /// Gives back what [`claim`](Self::claim) took: the blocks are a table's again.
    pub fn unclaim(&self, bytes: u64) {
        self.claimed.fetch_sub(bytes, Ordering::Relaxed);
        self.bytes.fetch_sub(bytes, Ordering::Relaxed);
        self.count(&[
            (Counter::BlockCacheBytes, -(bytes as i64)),
            (Counter::MemoryUsed, bytes as i64),
        ]);
        self.raise_peak();
    }

    /// Sets the bound, and returns cached blocks above it to the system (shard by shard, each
    /// one's largest first).
    pub fn set_limit(&self, bytes: u64) {
        self.bound.0.limit.store(bytes, Ordering::Relaxed);
        // After the new bound: whoever sees this count sees that bound (`bound_changes`).
        self.bound.0.changes.fetch_add(1, Ordering::Release);
        let mut freed = Vec::new();
        for i in 0..self.shards.in_use() {
            let mut pool = self.lock(i);
            for c in (0..CLASSES).rev() {
                while self.bytes.load(Ordering::Relaxed) > bytes {
                    let Some(b) = pool.lists[c].pop() else { break };
                    self.bytes.fetch_sub(b.size() as u64, Ordering::Relaxed);
                    freed.push(b);
                }
            }
        }
        for b in freed {
            self.count(&[(Counter::BlockCacheBytes, -(b.size() as i64))]);
            b.free();
        }
    }

    pub fn limit(&self) -> u64 {
        self.bound.0.limit.load(Ordering::Relaxed)
    }

    /// How many times the bound was set: read before a check against the bound, it tells a
    /// later reader whether that check still holds (the same count: the bound has not changed
    /// since).
    pub fn bound_changes(&self) -> u64 {
        self.bound.0.changes.load(Ordering::Acquire)
    }

    /// Whether the cached and claimed bytes are within the bound: not so after the bound was
    /// lowered while tables in use held claimed blocks, until those tables give them back.
    pub fn within_bound(&self) -> bool {
        self.cached_bytes() <= self.limit()
    }

    /// Bytes in cached blocks, claimed ones included.
    pub fn cached_bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Returns every cached block to the system, keeping the bound (the plugin is being
    /// unloaded).
    pub fn release_all(&self) {
        let limit = self.limit();
        self.set_limit(0);
        self.set_limit(limit);
        // The lists' own memory too: the library stays mapped after unloading, and its
        // statics with it, so whatever they hold would be held until the process ends.
        for i in 0..self.shards.in_use() {
            let lists = std::mem::replace(&mut self.lock(i).lists, [const { Vec::new() }; CLASSES]);
            drop(lists);
        }
    }

    /// Checks the invariants; panics on a violation.
    pub fn debug_check_consistency(&self) {
        let mut total = 0;
        for i in 0..self.shards.in_use() {
            for (c, list) in self.lock(i).lists.iter().enumerate() {
                for b in list {
                    assert_eq!(b.size(), MIN_BLOCK << c, "block in its size's list");
                    total += b.size() as u64;
                }
            }
        }
        let claimed = self.claimed.load(Ordering::Relaxed);
        assert_eq!(
            total + claimed,
            self.cached_bytes(),
            "the shards' and claimed bytes add up"
        );
        assert!(total + claimed <= self.limit(), "cache within its bound");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_freed_block_serves_the_next_take_of_its_size() {
        let cache = BlockCache::new(DEFAULT_LIMIT, false);
        let b = cache.take(8192).unwrap();
        let p = b.ptr();
        cache.give(b);
        assert_eq!(cache.cached_bytes(), 8192);
        // Another size does not take it.
        let other = cache.take(4096).unwrap();
        assert_ne!(other.ptr(), p);
        let again = cache.take(8192).unwrap();
        assert_eq!(again.ptr(), p);
        assert_eq!(cache.cached_bytes(), 0);
        cache.give(again);
        cache.give(other);
        cache.debug_check_consistency();
        cache.release_all();
        assert_eq!(cache.cached_bytes(), 0);
    }

    #[test]
    fn the_bound_holds_and_lowering_it_frees() {
        let cache = BlockCache::new(3 * 4096, false);
        let blocks: Vec<_> = (0..5).map(|_| cache.take(4096).unwrap()).collect();
        blocks.into_iter().for_each(|b| cache.give(b));
        // Three fit under the bound; two went back to the system.
        assert_eq!(cache.cached_bytes(), 3 * 4096);
        cache.debug_check_consistency();
        cache.set_limit(4096);
        assert_eq!(cache.cached_bytes(), 4096);
        cache.set_limit(0);
        assert_eq!(cache.cached_bytes(), 0);
        cache.debug_check_consistency();
    }

    #[test]
    fn claimed_bytes_count_under_the_bound() {
        let cache = BlockCache::new(3 * 4096, false);
        assert!(cache.claim(2 * 4096));
        assert!(!cache.claim(2 * 4096), "past the bound");
        let blocks: Vec<_> = (0..2).map(|_| cache.take(4096).unwrap()).collect();
        blocks.into_iter().for_each(|b| cache.give(b));
        // One fits beside the claimed two.
        assert_eq!(cache.cached_bytes(), 3 * 4096);
        cache.debug_check_consistency();
        cache.unclaim(2 * 4096);
        assert_eq!(cache.cached_bytes(), 4096);
        assert!(cache.claim(2 * 4096));
        cache.debug_check_consistency();
        cache.unclaim(2 * 4096);
        cache.release_all();
        assert_eq!(cache.cached_bytes(), 0);
    }

    #[test]
    fn setting_the_bound_is_counted() {
        let cache = BlockCache::new(4096, false);
        let before = cache.bound_changes();
        cache.set_limit(8192);
        assert_eq!((cache.limit(), cache.bound_changes()), (8192, before + 1));
        cache.release_all();
        assert_eq!(cache.limit(), 8192, "releasing everything keeps the bound");
    }

    #[test]
    fn odd_sizes_are_never_cached() {
        let cache = BlockCache::new(DEFAULT_LIMIT, false);
        cache.give(cache.take(MAX_BLOCK * 2).unwrap());
        cache.give(cache.take(3000).unwrap());
        assert_eq!(cache.cached_bytes(), 0);
    }
}
