//! A table's allocator for its index structures (hash tables, tree nodes, key images): small
//! pieces carved from the table's blocks, reused through per-size free lists, every byte of it
//! in blocks from [`super::cache`].
//!
//! Blocks follow [`Growth`]; a piece is a power of two from 8 bytes to [`SMALL_MAX`], carved
//! off the newest block, and a freed piece waits on its size's list for the next request of
//! that size. A request above [`SMALL_MAX`] (a big hash table's bucket array) gets a block of
//! its own. Nothing goes back to the cache before the arena is dropped with its table, as HEAP
//! keeps a table's blocks until the table is emptied.
//!
//! The collections take the arena as their allocator (`allocator_api2`), so their code stays
//! that of ordinary collections; every request goes through one mutex, uncontended, since a
//! table is only changed under its write lock.

use super::cache;
use super::policy::Growth;
use super::system::{RawBlock, ALIGN};
use allocator_api2::alloc::{AllocError, Allocator, Layout};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// The largest piece carved from a shared block.
pub const SMALL_MAX: usize = 64 << 10;
const MIN_PIECE: usize = 8;
const CLASSES: usize = (SMALL_MAX.trailing_zeros() - MIN_PIECE.trailing_zeros() + 1) as usize;

/// A handle on one table's index memory; clones share it.
#[derive(Clone)]
pub struct Arena(Arc<Shared>);

struct Shared {
    /// What the arena was made with (for [`Arena::fresh`]).
    params: (usize, u64, u64),
    inner: Mutex<Inner>,
    /// `Inner::bytes`, readable without the lock.
    bytes: AtomicUsize,
}

impl std::fmt::Debug for Arena {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Arena")
            .field("bytes", &self.bytes())
            .finish()
    }
}

struct Inner {
    growth: Growth,
    /// Blocks pieces are carved from, in order: `blocks[carving]` is the one being carved, and
    /// the ones after it (kept by [`Arena::clear_keeping_blocks`]) are carved next.
    blocks: Vec<RawBlock>,
    carving: usize,
    /// The uncarved part of `blocks[carving]`: `[bump, bump_end)`.
    bump: usize,
    bump_end: usize,
    /// Freed pieces of each size: the first word of a free piece points at the next one.
    free: [Option<NonNull<u8>>; CLASSES],
    /// Blocks that each hold one large piece.
    large: Vec<RawBlock>,
    bytes: usize,
}

// SAFETY: the pointers in `Inner` point into blocks `Inner` owns; nothing else refers to the
// free pieces, and every access goes through the arena's mutex.
unsafe impl Send for Inner {}

impl Arena {
    /// An arena whose first block is sized for about `planned` pieces of `element` bytes, never
    /// beyond `limit` bytes.
    pub fn new(element: usize, planned: u64, limit: u64) -> Arena {
        Arena(Arc::new(Shared {
            params: (element, planned, limit),
            inner: Mutex::new(Inner {
                growth: Growth::new(element, planned, limit),
                blocks: Vec::new(),
                carving: 0,
                bump: 0,
                bump_end: 0,
                free: [None; CLASSES],
                large: Vec::new(),
                bytes: 0,
            }),
            bytes: AtomicUsize::new(0),
        }))
    }

    /// A new, empty arena made as this one was.
    pub fn fresh(&self) -> Arena {
        let (element, planned, limit) = self.0.params;
        Arena::new(element, planned, limit)
    }

    /// Frees every piece at once and keeps the blocks they were carved from: the next pieces
    /// are carved from them again, first to last, before the arena takes another block. Blocks
    /// of large pieces go back to the cache. As when an arena is dropped, pointers to its
    /// pieces dangle. When another handle on the arena exists (collections that may still use
    /// their pieces), this one starts over in a new arena instead.
    pub fn clear_keeping_blocks(&mut self) {
        let Some(shared) = Arc::get_mut(&mut self.0) else {
            *self = self.fresh();
            return;
        };
        let inner = shared.inner.get_mut().unwrap_or_else(|e| e.into_inner());
        for b in inner.large.drain(..) {
            inner.bytes -= b.size();
            cache::give(b);
        }
        inner.free = [None; CLASSES];
        inner.carve(0);
        shared.bytes.store(inner.bytes, Ordering::Relaxed);
    }

    /// Bytes of the blocks the arena holds.
    pub fn bytes(&self) -> usize {
        self.0.bytes.load(Ordering::Relaxed)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Nothing panics while the arena is held; a poisoned one is still consistent.
        self.0.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Publishes the held bytes after a change under the lock.
    fn publish(&self, inner: &Inner) {
        self.0.bytes.store(inner.bytes, Ordering::Relaxed);
    }

    /// Checks the invariants; panics on a violation.
    pub fn debug_check_consistency(&self) {
        let inner = self.lock();
        let held: usize = inner
            .blocks
            .iter()
            .chain(&inner.large)
            .map(RawBlock::size)
            .sum();
        assert_eq!(held, inner.bytes, "block bytes add up");
        assert_eq!(inner.bytes, self.bytes(), "published bytes");
        for (c, head) in inner.free.iter().enumerate() {
            let mut p = *head;
            while let Some(piece) = p {
                let a = piece.as_ptr() as usize;
                assert!(
                    inner.blocks.iter().any(|b| {
                        let s = b.ptr().as_ptr() as usize;
                        a >= s && a + (MIN_PIECE << c) <= s + b.size()
                    }),
                    "free piece inside a block"
                );
                // SAFETY: free pieces hold the next pointer in their first word (see dealloc).
                p = unsafe {
                    piece
                        .cast::<Option<NonNull<u8>>>()
                        .as_ptr()
                        .read_unaligned()
                };
            }
        }
    }
}

fn class_of(size: usize, align: usize) -> usize {
    let piece = size.max(align).max(MIN_PIECE).next_power_of_two();
    (piece.trailing_zeros() - MIN_PIECE.trailing_zeros()) as usize
}

impl Inner {
    /// Carves from block `i` from its start (nothing when there is no such block).
    fn carve(&mut self, i: usize) {
        self.carving = i;
        (self.bump, self.bump_end) = self.blocks.get(i).map_or((0, 0), |b| {
            let start = b.ptr().as_ptr() as usize;
            (start, start + b.size())
        });
    }

    fn alloc_small(&mut self, c: usize) -> Option<NonNull<u8>> {
        if let Some(p) = self.free[c] {
            // SAFETY: a free piece holds the next free pointer in its first word.
            self.free[c] = unsafe { p.cast::<Option<NonNull<u8>>>().as_ptr().read_unaligned() };
            return Some(p);
        }
        let size = MIN_PIECE << c;
        let align = size.min(ALIGN);
        let mut start = self.bump.next_multiple_of(align);
        while self.blocks.is_empty() || start + size > self.bump_end {
            if self.carving + 1 < self.blocks.len() {
                // A kept block is next (the rest of this one waits for the next clear).
                self.carve(self.carving + 1);
            } else {
                self.blocks.try_reserve(1).ok()?;
                let b = cache::take(self.growth.next_block(size))?;
                self.bytes += b.size();
                self.blocks.push(b);
                self.carve(self.blocks.len() - 1);
            }
            start = self.bump.next_multiple_of(align);
        }
        self.bump = start + size;
        NonNull::new(start as *mut u8)
    }

    fn alloc_large(&mut self, size: usize) -> Option<NonNull<u8>> {
        self.large.try_reserve(1).ok()?;
        let b = cache::take(size.checked_next_power_of_two()?)?;
        self.bytes += b.size();
        let p = b.ptr();
        self.large.push(b);
        Some(p)
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.blocks
            .drain(..)
            .chain(self.large.drain(..))
            .for_each(cache::give);
    }
}

// SAFETY: a piece handed out is `layout.size()` bytes (its class is at least that) aligned to
// `layout.align()` (classes are powers of two at least the alignment, carved at offsets that
// are multiples of min(class, ALIGN) from ALIGN-aligned blocks; larger alignments are refused),
// and stays valid until deallocated or the arena (every clone) is dropped: no piece is handed
// out twice, as a piece is either carved once or popped from a free list it was pushed on once.
unsafe impl Allocator for Arena {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        if layout.align() > ALIGN {
            return Err(AllocError);
        }
        if layout.size() == 0 {
            // A dangling, aligned pointer, as for any zero-sized allocation.
            let p = NonNull::new(layout.align() as *mut u8).ok_or(AllocError)?;
            return Ok(NonNull::slice_from_raw_parts(p, 0));
        }
        let mut inner = self.lock();
        let p = if layout.size() <= SMALL_MAX {
            inner.alloc_small(class_of(layout.size(), layout.align()))
        } else {
            inner.alloc_large(layout.size())
        };
        self.publish(&inner);
        p.map(|p| NonNull::slice_from_raw_parts(p, layout.size()))
            .ok_or(AllocError)
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        if layout.size() == 0 {
            return;
        }
        let mut inner = self.lock();
        if layout.size() <= SMALL_MAX {
            let c = class_of(layout.size(), layout.align());
            // SAFETY: the caller gives back a piece this arena allocated with this layout, so
            // it has at least MIN_PIECE bytes to hold the list link, and nobody uses it now.
            unsafe {
                ptr.cast::<Option<NonNull<u8>>>()
                    .as_ptr()
                    .write_unaligned(inner.free[c])
            };
            inner.free[c] = Some(ptr);
        } else if let Some(i) = inner.large.iter().position(|b| b.ptr() == ptr) {
            let b = inner.large.swap_remove(i);
            inner.bytes -= b.size();
            self.publish(&inner);
            cache::give(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use allocator_api2::vec::Vec as AVec;
    use proptest::prelude::*;

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
    fn cleared_blocks_are_carved_again() {
        let mut a = Arena::new(64, 0, u64::MAX);
        let small = Layout::from_size_align(1000, 8).unwrap();
        let carve = |a: &Arena| -> Vec<NonNull<u8>> {
            (0..200)
                .map(|_| a.allocate(small).unwrap().cast::<u8>())
                .collect()
        };
        let first = carve(&a);
        let large = Layout::from_size_align(SMALL_MAX + 1, 8).unwrap();
        a.allocate(large).unwrap();
        let held = a.bytes();
        a.clear_keeping_blocks();
        assert_eq!(
            a.bytes(),
            held - 2 * SMALL_MAX,
            "the large piece's block went back"
        );
        a.debug_check_consistency();
        let again = carve(&a);
        assert_eq!(a.bytes(), held - 2 * SMALL_MAX, "the kept blocks held them");
        assert_eq!(again, first, "carved in the same order");
        a.debug_check_consistency();
        // Another handle may still use its pieces: the arena starts over instead.
        let other = a.clone();
        a.clear_keeping_blocks();
        assert_eq!(a.bytes(), 0);
        assert_eq!(other.bytes(), held - 2 * SMALL_MAX);
    }

    proptest! {
        /// Pieces never overlap and keep their contents, whatever the order of requests.
        #[test]
        fn pieces_never_overlap(ops in proptest::collection::vec((1usize..3000, any::<bool>()), 1..200)) {
            let a = Arena::new(8, 0, u64::MAX);
            let mut live: Vec<(NonNull<u8>, Layout, u8)> = Vec::new();
            for (i, (size, free)) in ops.into_iter().enumerate() {
                if free && !live.is_empty() {
                    let (p, l, tag) = live.swap_remove(i % live.len());
                    // SAFETY: allocated below with this layout and filled with `tag`.
                    let bytes = unsafe { std::slice::from_raw_parts(p.as_ptr(), l.size()) };
                    prop_assert!(bytes.iter().all(|&b| b == tag));
                    // SAFETY: allocated by `a` with layout `l`, freed once.
                    unsafe { a.deallocate(p, l) };
                } else {
                    let l = Layout::from_size_align(size, 8).unwrap();
                    let p = a.allocate(l).unwrap().cast::<u8>();
                    let tag = i as u8;
                    // SAFETY: `p` has `size` writable bytes.
                    unsafe { p.as_ptr().write_bytes(tag, size) };
                    live.push((p, l, tag));
                }
            }
            for (p, l, tag) in &live {
                // SAFETY: as above.
                let bytes = unsafe { std::slice::from_raw_parts(p.as_ptr(), l.size()) };
                prop_assert!(bytes.iter().all(|b| b == tag));
            }
            a.debug_check_consistency();
        }
    }
}
