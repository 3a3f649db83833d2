//! Small pieces of memory carved from a table's blocks, reused through per-size free lists,
//! for one owner that changes them through `&mut` (no lock): a table's packed rows
//! ([`crate::rows::store`]), and, behind the lock of an [`super::Arena`], its index structures.
//!
//! Blocks follow [`Growth`]; a piece is one of [`CLASSES`] sizes from 8 bytes to [`SMALL_MAX`]
//! (every multiple of 8 up to 128 bytes, then four sizes per doubling: 160, 192, 224, 256, 320,
//! ...), so a packed row wastes at most a fifth of its piece and mostly a few bytes. It is
//! carved off the newest block, and a freed piece waits on its size's list for the next
//! request of that size. A request above [`SMALL_MAX`] (a big hash table's bucket array) gets a block of
//! its own. Nothing goes back to the cache before [`Pieces::clear_keeping_blocks`] or the
//! drop, as HEAP keeps a table's blocks until the table is emptied.

use super::meter::Meter;
use super::policy::Growth;
use super::system::{RawBlock, ALIGN};
use allocator_api2::alloc::Layout;
use std::ptr::NonNull;

/// The largest piece carved from a shared block.
pub const SMALL_MAX: usize = 64 << 10;
const MIN_PIECE: usize = 8;
/// The smallest block taken past the table's limit ([`Pieces::allocate_past_limit`]).
const PAST_LIMIT_BLOCK: usize = 4096;
/// Up to this size, pieces are every multiple of [`MIN_PIECE`].
const FINE_MAX: usize = 128;
/// Sizes of a piece above [`FINE_MAX`] per doubling.
const STEPS: usize = 4;
/// Sizes of pieces.
const CLASSES: usize = FINE_MAX / MIN_PIECE
    + STEPS * (SMALL_MAX.trailing_zeros() - FINE_MAX.trailing_zeros()) as usize;

pub struct Pieces {
    /// What it was made with (for [`Pieces::fresh`]).
    params: (usize, u64, u64),
    growth: Growth,
    /// Blocks pieces are carved from, in order: `blocks[carving]` is the one being carved, and
    /// the ones after it (kept by [`Pieces::clear_keeping_blocks`]) are carved next.
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
    /// The table's count of blocks, and its limit.
    meter: Meter,
}

// SAFETY: the pointers in `Pieces` point into blocks it owns, and nothing else refers to the
// free pieces: it can move to another thread with its blocks.
unsafe impl Send for Pieces {}
// SAFETY: every change goes through `&mut self`; through `&self` only plain fields are read.
unsafe impl Sync for Pieces {}

impl std::fmt::Debug for Pieces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pieces")
            .field("bytes", &self.bytes)
            .finish()
    }
}

/// The size class of a request: the smallest piece that holds `size` bytes (every piece is
/// aligned to [`ALIGN`], as every class size is a multiple of it).
fn class_of(size: usize) -> usize {
    let size = size.max(MIN_PIECE);
    if size <= FINE_MAX {
        return size.div_ceil(MIN_PIECE) - 1;
    }
    // size in (base, 2 * base], cut into STEPS sizes.
    let p = (size - 1).ilog2();
    let base = 1usize << p;
    let step = base / STEPS;
    let q = (size - base).div_ceil(step) - 1;
    FINE_MAX / MIN_PIECE + STEPS * (p - FINE_MAX.trailing_zeros()) as usize + q
}

/// Bytes of a piece of class `c`.
fn class_size(c: usize) -> usize {
    let fine = FINE_MAX / MIN_PIECE;
    if c < fine {
        return MIN_PIECE * (c + 1);
    }
    let base = FINE_MAX << ((c - fine) / STEPS);
    base + (c - fine) % STEPS * (base / STEPS) + base / STEPS
}

impl Pieces {
    /// Pieces whose first block is sized for about `planned` pieces of `element` bytes, never
    /// beyond `limit` bytes; their blocks are counted by `meter`.
    pub fn new(element: usize, planned: u64, limit: u64, meter: Meter) -> Pieces {
        Pieces {
            params: (element, planned, limit),
            growth: Growth::new(element, planned, limit),
            blocks: Vec::new(),
            carving: 0,
            bump: 0,
            bump_end: 0,
            free: [None; CLASSES],
            large: Vec::new(),
            bytes: 0,
            meter,
        }
    }

    /// New, empty pieces made as these were, counted by the same meter.
    pub fn fresh(&self) -> Pieces {
        let (element, planned, limit) = self.params;
        Pieces::new(element, planned, limit, self.meter.clone())
    }

    /// Bytes of the blocks held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// A piece of `layout.size()` bytes aligned to `layout.align()`, valid until it is given
    /// back with [`deallocate`](Self::deallocate), the blocks are cleared, or `self` is
    /// dropped; None when no block can be had or the alignment is above [`ALIGN`].
    pub fn allocate(&mut self, layout: Layout) -> Option<NonNull<u8>> {
        self.allocate_within(layout, false)
    }

    /// As [`allocate`](Self::allocate), but a new block is taken whatever the table's limit
    /// and the server-wide budget say ([`Meter::take_past_limit`]): for an update of a row
    /// that no longer fits its piece. None only when no memory can be had.
    pub fn allocate_past_limit(&mut self, layout: Layout) -> Option<NonNull<u8>> {
        self.allocate_within(layout, true)
    }

    fn allocate_within(&mut self, layout: Layout, past_limit: bool) -> Option<NonNull<u8>> {
        if layout.align() > ALIGN {
            return None;
        }
        if layout.size() == 0 {
            // A dangling, aligned pointer, as for any zero-sized allocation.
            return NonNull::new(layout.align() as *mut u8);
        }
        if layout.size() <= SMALL_MAX {
            self.alloc_small(class_of(layout.size()), past_limit)
        } else {
            self.alloc_large(layout.size(), past_limit)
        }
    }

    /// Whether a piece allocated with `a` holds `b` too (the same size class, both small):
    /// its owner may then keep it for `b`, and must give it back with `b`.
    pub fn same_piece(a: Layout, b: Layout) -> bool {
        let small = |l: Layout| l.size() != 0 && l.size() <= SMALL_MAX && l.align() <= ALIGN;
        small(a) && small(b) && class_of(a.size()) == class_of(b.size())
    }

    /// Gives a piece back.
    ///
    /// # Safety
    /// `ptr` must come from [`allocate`](Self::allocate) on `self` with this `layout`, since
    /// the last clear, and not be given back before; nothing may use it afterwards.
    pub unsafe fn deallocate(&mut self, ptr: NonNull<u8>, layout: Layout) {
        if layout.size() == 0 {
            return;
        }
        if layout.size() <= SMALL_MAX {
            let c = class_of(layout.size());
            // SAFETY: by the contract a piece of this layout, so it has at least MIN_PIECE
            // bytes to hold the list link, and nobody uses it now.
            unsafe {
                ptr.cast::<Option<NonNull<u8>>>()
                    .as_ptr()
                    .write_unaligned(self.free[c])
            };
            self.free[c] = Some(ptr);
        } else if let Some(i) = self.large.iter().position(|b| b.ptr() == ptr) {
            let b = self.large.swap_remove(i);
            self.bytes -= b.size();
            self.meter.give(b);
        }
    }

    /// Frees every piece at once and keeps the blocks they were carved from: the next pieces
    /// are carved from them again, first to last, before another block is taken. Blocks of
    /// large pieces go back to the cache. Pointers to the pieces dangle, as after a drop.
    pub fn clear_keeping_blocks(&mut self) {
        for b in self.large.drain(..) {
            self.bytes -= b.size();
            self.meter.give(b);
        }
        self.free = [None; CLASSES];
        self.carve(0);
    }

    /// Carves from block `i` from its start (nothing when there is no such block).
    fn carve(&mut self, i: usize) {
        self.carving = i;
        (self.bump, self.bump_end) = self.blocks.get(i).map_or((0, 0), |b| {
            let start = b.ptr().as_ptr() as usize;
            (start, start + b.size())
        });
    }

    fn alloc_small(&mut self, c: usize, past_limit: bool) -> Option<NonNull<u8>> {
        if let Some(p) = self.free[c] {
            // SAFETY: a free piece holds the next free pointer in its first word.
            self.free[c] = unsafe { p.cast::<Option<NonNull<u8>>>().as_ptr().read_unaligned() };
            return Some(p);
        }
        let size = class_size(c);
        let mut start = self.bump.next_multiple_of(ALIGN);
        while self.blocks.is_empty() || start + size > self.bump_end {
            if self.carving + 1 < self.blocks.len() {
                // A kept block is next (the rest of this one waits for the next clear).
                self.carve(self.carving + 1);
            } else {
                self.blocks.try_reserve(1).ok()?;
                // Past the limit, a block just big enough (the growth is the table's).
                let b = match past_limit {
                    false => self.meter.take(self.growth.next_block(size), size)?,
                    true => self
                        .meter
                        .take_past_limit(size.next_power_of_two().max(PAST_LIMIT_BLOCK))?,
                };
                self.bytes += b.size();
                self.blocks.push(b);
                self.carve(self.blocks.len() - 1);
            }
            start = self.bump.next_multiple_of(ALIGN);
        }
        self.bump = start + size;
        NonNull::new(start as *mut u8)
    }

    fn alloc_large(&mut self, size: usize, past_limit: bool) -> Option<NonNull<u8>> {
        self.large.try_reserve(1).ok()?;
        let size = size.checked_next_power_of_two()?;
        let b = match past_limit {
            false => self.meter.take(size, size)?,
            true => self.meter.take_past_limit(size)?,
        };
        self.bytes += b.size();
        let p = b.ptr();
        self.large.push(b);
        Some(p)
    }

    /// Checks the invariants; panics on a violation.
    pub fn debug_check_consistency(&self) {
        let held: usize = self
            .blocks
            .iter()
            .chain(&self.large)
            .map(RawBlock::size)
            .sum();
        assert_eq!(held, self.bytes, "block bytes add up");
        for (c, head) in self.free.iter().enumerate() {
            let mut p = *head;
            while let Some(piece) = p {
                let a = piece.as_ptr() as usize;
                assert!(
                    self.blocks.iter().any(|b| {
                        let s = b.ptr().as_ptr() as usize;
                        a >= s && a + class_size(c) <= s + b.size()
                    }),
                    "free piece inside a block"
                );
                // SAFETY: free pieces hold the next pointer in their first word (see
                // deallocate).
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

impl Drop for Pieces {
    fn drop(&mut self) {
        let meter = &self.meter;
        self.blocks
            .drain(..)
            .chain(self.large.drain(..))
            .for_each(|b| meter.give(b));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn classes_cover_every_size_tightly() {
        assert_eq!(class_size(CLASSES - 1), SMALL_MAX);
        let sizes: Vec<usize> = (0..CLASSES).map(class_size).collect();
        assert!(sizes.windows(2).all(|w| w[0] < w[1]), "sizes grow");
        assert_eq!(&sizes[14..22], &[120, 128, 160, 192, 224, 256, 320, 384]);
        for size in 1..=SMALL_MAX {
            let c = class_of(size);
            assert!(class_size(c) >= size, "class {c} holds {size}");
            assert!(
                c == 0 || class_size(c - 1) < size,
                "{size}: the smallest class"
            );
            assert!(
                class_size(c) <= size.div_ceil(8) * 8 * 5 / 4,
                "{size}: within a fifth"
            );
        }
    }

    #[test]
    fn cleared_blocks_are_carved_again() {
        let mut a = Pieces::new(64, 0, u64::MAX, Meter::unlimited());
        let small = Layout::from_size_align(1000, 8).unwrap();
        let carve = |a: &mut Pieces| -> Vec<NonNull<u8>> {
            (0..200).map(|_| a.allocate(small).unwrap()).collect()
        };
        let first = carve(&mut a);
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
        let again = carve(&mut a);
        assert_eq!(a.bytes(), held - 2 * SMALL_MAX, "the kept blocks held them");
        assert_eq!(again, first, "carved in the same order");
        a.debug_check_consistency();
        assert_eq!(a.fresh().bytes(), 0, "made as these were, with no block");
    }

    proptest! {

        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::testing::cases(256)))]
        /// Pieces never overlap and keep their contents, whatever the order of requests.
        #[test]
        fn pieces_never_overlap(ops in proptest::collection::vec((1usize..3000, any::<bool>()), 1..200)) {
            let mut a = Pieces::new(8, 0, u64::MAX, Meter::unlimited());
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
                    let p = a.allocate(l).unwrap();
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
