//! A table's allocator for its index structures (hash tables, tree nodes, key images): its
//! [`Pieces`], shared by the collections that take the arena as their allocator
//! (`allocator_api2`), so their code stays that of ordinary collections.
//!
//! Every request goes through one mutex, uncontended, since a table is only changed under its
//! write lock. (A table's packed rows have their own [`Pieces`], which the row store changes
//! through `&mut`, with no lock.)

use super::meter::Meter;
use super::pieces::Pieces;
use allocator_api2::alloc::{AllocError, Allocator, Layout};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

pub use super::pieces::SMALL_MAX;

/// A handle on one table's index memory; clones share it.
#[derive(Clone)]
pub struct Arena(Arc<Shared>);

struct Shared {
    pieces: Mutex<Pieces>,
    /// `Pieces::bytes`, readable without the lock.
    bytes: AtomicUsize,
}

impl std::fmt::Debug for Arena {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Arena")
            .field("bytes", &self.bytes())
            .finish()
    }
}

impl Arena {
    /// An arena whose first block is sized for about `planned` pieces of `element` bytes, never
    /// beyond `limit` bytes, with a meter of its own and no limit (for tests and tools).
    pub fn new(element: usize, planned: u64, limit: u64) -> Arena {
        Arena::of(Pieces::new(element, planned, limit, Meter::unlimited()))
    }

    /// As [`new`](Self::new), its blocks counted by `meter` (the table's), or `OutOfMemory`
    /// when its few bytes cannot be had.
    pub fn try_new(
        element: usize,
        planned: u64,
        limit: u64,
        meter: Meter,
    ) -> crate::error::Result<Arena> {
        Ok(Arena(super::fallible::try_arc(Shared {
            pieces: Mutex::new(Pieces::new(element, planned, limit, meter)),
            bytes: AtomicUsize::new(0),
        })?))
    }

    fn of(pieces: Pieces) -> Arena {
        Arena(Arc::new(Shared {
            pieces: Mutex::new(pieces),
            bytes: AtomicUsize::new(0),
        }))
    }

    /// A new, empty arena made as this one was.
    pub fn fresh(&self) -> Arena {
        Arena::of(self.lock().fresh())
    }

    /// Frees every piece at once and keeps the blocks they were carved from (see
    /// [`Pieces::clear_keeping_blocks`]). As when an arena is dropped, pointers to its pieces
    /// dangle. When another handle on the arena exists (collections that may still use their
    /// pieces), this one starts over in a new arena instead.
    pub fn clear_keeping_blocks(&mut self) {
        let Some(shared) = Arc::get_mut(&mut self.0) else {
            *self = self.fresh();
            return;
        };
        let pieces = shared.pieces.get_mut().unwrap_or_else(|e| e.into_inner());
        pieces.clear_keeping_blocks();
        shared.bytes.store(pieces.bytes(), Ordering::Relaxed);
    }

    /// Bytes of the blocks the arena holds.
    pub fn bytes(&self) -> usize {
        self.0.bytes.load(Ordering::Relaxed)
    }

    fn lock(&self) -> MutexGuard<'_, Pieces> {
        // Nothing panics while the arena is held; a poisoned one is still consistent.
        self.0.pieces.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Publishes the held bytes after a change under the lock.
    fn publish(&self, pieces: &Pieces) {
        self.0.bytes.store(pieces.bytes(), Ordering::Relaxed);
    }

    /// Checks the invariants; panics on a violation.
    pub fn debug_check_consistency(&self) {
        let pieces = self.lock();
        pieces.debug_check_consistency();
        assert_eq!(pieces.bytes(), self.bytes(), "published bytes");
    }
}

// SAFETY: `Pieces::allocate` hands out a piece of `layout.size()` bytes aligned to
// `layout.align()` that stays valid until it is deallocated or the pieces (with every clone
// of the arena) are dropped; `clear_keeping_blocks` needs the only handle (`Arc::get_mut`), and
// so no collection that could still use a piece. Every call is serialised by the mutex.
unsafe impl Allocator for Arena {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        let mut pieces = self.lock();
        let p = pieces.allocate(layout);
        self.publish(&pieces);
        p.map(|p| NonNull::slice_from_raw_parts(p, layout.size()))
            .ok_or(AllocError)
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        let mut pieces = self.lock();
        // SAFETY: the caller gives back a piece this arena allocated with this layout, and
        // nobody uses it now (the Allocator contract).
        unsafe { pieces.deallocate(ptr, layout) };
        self.publish(&pieces);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use allocator_api2::vec::Vec as AVec;

    #[test]
    fn pieces_are_reused_and_blocks_grow() {
        let a = Arena::new(16, 0, u64::MAX);
        let mut v: AVec<u64, Arena> = AVec::new_in(a.clone());
        for i in 0..4_000u64 {
            v.push(i);
        }
        assert!(a.bytes() >= 32_000);
        assert_eq!(v.iter().sum::<u64>(), 4_000 * 3_999 / 2);
        let before = a.bytes();
        drop(v);
        let mut w: AVec<u64, Arena> = AVec::new_in(a.clone());
        w.extend(0..3_000u64);
        // Freed pieces served the new vector: no new block was needed.
        assert_eq!(a.bytes(), before);
        // A piece above SMALL_MAX has a block of its own, given back when it is freed.
        let big: AVec<u8, Arena> = AVec::with_capacity_in(SMALL_MAX + 1, a.clone());
        assert_eq!(a.bytes(), before + (SMALL_MAX * 2));
        drop(big);
        assert_eq!(a.bytes(), before);
        a.debug_check_consistency();
    }

    #[test]
    fn a_shared_arena_starts_over_when_cleared() {
        let mut a = Arena::new(64, 0, u64::MAX);
        let small = Layout::from_size_align(1000, 8).unwrap();
        let first: Vec<_> = (0..50).map(|_| a.allocate(small).unwrap()).collect();
        let held = a.bytes();
        a.clear_keeping_blocks();
        assert_eq!(a.bytes(), held, "its only handle keeps the blocks");
        assert_eq!(
            a.allocate(small).unwrap(),
            first[0],
            "carved from the start again"
        );
        a.debug_check_consistency();
        // Another handle may still use its pieces: the arena starts over instead.
        let other = a.clone();
        a.clear_keeping_blocks();
        assert_eq!(a.bytes(), 0);
        assert_eq!(other.bytes(), held);
    }
}
