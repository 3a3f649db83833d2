//! An array in an arena whose pieces never pass the block size: [`ChunkVec`].
//!
//! A large index structure (a hash index's slots, a tree's nodes, the links between rows of
//! equal keys) is one logical array. Asked of the arena as one piece it would take one block
//! as large as the whole array, far past [`MAX_BLOCK`]. Here it is a list of chunks of at most
//! `BYTES` bytes: item `i` is in chunk `i >> shift`, and the first chunk grows as a vector does
//! until it is full, so a small array takes a small piece.
//!
//! Two sizes serve two shapes. An array that is made whole and replaced by one twice as large
//! (a hash index's slots) has chunks of up to [`MAX_BLOCK`]: pieces that large have blocks of
//! their own, which go back as soon as the old array goes. An array that only grows (a tree's
//! nodes) has chunks of [`SMALL_MAX`], carved from the arena's blocks, and grows a chunk at a
//! time: nothing is copied or freed, and a table at its limit is full within a chunk of it.

use super::arena::SMALL_MAX;
use super::policy::MAX_BLOCK;
use super::Arena;
use crate::error::Result;
use allocator_api2::vec::Vec as AVec;

/// Items of `T` in chunks of at most `BYTES` bytes, from an arena.
#[derive(Debug)]
pub struct ChunkVec<T, const BYTES: usize = MAX_BLOCK> {
    chunks: AVec<AVec<T, Arena>, Arena>,
    len: usize,
}

/// A [`ChunkVec`] that only grows: chunks carved from the arena's blocks.
pub type GrowingVec<T> = ChunkVec<T, SMALL_MAX>;

impl<T: Copy, const BYTES: usize> ChunkVec<T, BYTES> {
    /// log2 of the items in a full chunk.
    const SHIFT: u32 = (BYTES / std::mem::size_of::<T>()).ilog2();
    const MASK: usize = (1 << Self::SHIFT) - 1;

    pub fn new(arena: &Arena) -> Self {
        ChunkVec {
            chunks: AVec::new_in(arena.clone()),
            len: 0,
        }
    }

    /// `len` items of `value`, or `OutOfMemory` (the arena refused a piece).
    pub fn try_filled(len: usize, value: T, arena: &Arena) -> Result<Self> {
        let mut v = ChunkVec::new(arena);
        v.try_resize(len, value)?;
        Ok(v)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    pub fn get(&self, i: usize) -> T {
        self.chunks[i >> Self::SHIFT][i & Self::MASK]
    }

    #[inline(always)]
    pub fn at(&self, i: usize) -> &T {
        &self.chunks[i >> Self::SHIFT][i & Self::MASK]
    }

    #[inline(always)]
    pub fn at_mut(&mut self, i: usize) -> &mut T {
        &mut self.chunks[i >> Self::SHIFT][i & Self::MASK]
    }

    #[inline(always)]
    pub fn set(&mut self, i: usize, value: T) {
        self.chunks[i >> Self::SHIFT][i & Self::MASK] = value;
    }

    /// Sets every item to `value`.
    pub fn fill(&mut self, value: T) {
        self.chunks.iter_mut().for_each(|c| c.fill(value));
    }

    /// Makes the array at least `len` long, new items `value`; on `OutOfMemory` it is as
    /// before. A chunk is asked for with exactly the room it ends with: the first grows to
    /// `len` (up to a full chunk), the next ones are full chunks.
    pub fn try_resize(&mut self, len: usize, value: T) -> Result<()> {
        if len <= self.len {
            return Ok(());
        }
        let full = Self::MASK + 1;
        let chunks = len.div_ceil(full);
        self.chunks.try_reserve_exact(chunks - self.chunks.len())?;
        if let Some(first) = self.chunks.first_mut() {
            let want = len.min(full);
            first.try_reserve_exact(want - first.len())?;
        }
        let arena = self.chunks.allocator().clone();
        while self.chunks.len() < chunks {
            let mut c = AVec::new_in(arena.clone());
            c.try_reserve_exact(if self.chunks.is_empty() {
                len.min(full)
            } else {
                full
            })?;
            self.chunks.push(c);
        }
        // Every piece is had: now nothing can fail.
        let last = self.chunks.len() - 1;
        for (n, c) in self.chunks.iter_mut().enumerate() {
            let want = if n < last { full } else { len - last * full };
            if c.len() < want {
                c.resize(want, value);
            }
        }
        self.len = len;
        Ok(())
    }

    /// Makes the array longer, new items `value`: twice as long while it is one chunk (at
    /// least `first` items), then by a chunk. When that is refused (the table's limit), by an
    /// eighth, so that a table is full near its limit and not a doubling before it. On
    /// `OutOfMemory` it is as before.
    pub fn try_grow(&mut self, first: usize, value: T) -> Result<()> {
        let full = Self::MASK + 1;
        let len = match self.len {
            n if n < full => (n * 2).clamp(first.min(full), full),
            n => n + full,
        };
        let Err(e) = self.try_resize(len, value) else {
            return Ok(());
        };
        let smaller = self.len + (self.len / 8).max(first).min(full - self.len % full);
        if smaller >= len {
            return Err(e);
        }
        self.try_resize(smaller, value)?;
        // The refusal was answered: no write finds the table full for it.
        super::refusal::take();
        Ok(())
    }

    /// The items, in order.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        self.chunks.iter().flat_map(|c| c.iter().copied())
    }

    /// Checks the invariants; panics on a violation.
    pub fn debug_check_consistency(&self) {
        let full = Self::MASK + 1;
        assert_eq!(
            self.chunks.iter().map(|c| c.len()).sum::<usize>(),
            self.len,
            "the chunks hold the items"
        );
        for (n, c) in self.chunks.iter().enumerate() {
            assert!(
                c.capacity() * std::mem::size_of::<T>() <= BYTES.min(MAX_BLOCK),
                "chunk {n} fits a block"
            );
            if n + 1 < self.chunks.len() {
                assert_eq!(c.len(), full, "chunk {n} before the last is full");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_cross_chunks_and_no_piece_passes_a_block() {
        let arena = Arena::new(16, 0, u64::MAX);
        let mut v = ChunkVec::<u64>::new(&arena);
        let per_chunk = MAX_BLOCK / 8;
        v.try_resize(10, 7).unwrap();
        assert_eq!((v.len(), v.get(9)), (10, 7));
        v.try_resize(per_chunk * 2 + 3, 1).unwrap();
        assert_eq!(v.len(), per_chunk * 2 + 3);
        assert_eq!((v.get(9), v.get(10), v.get(per_chunk * 2 + 2)), (7, 1, 1));
        v.set(per_chunk + 5, 42);
        assert_eq!(v.get(per_chunk + 5), 42);
        assert_eq!(v.iter().filter(|&x| x == 42).count(), 1);
        v.debug_check_consistency();
        v.fill(0);
        assert!(v.iter().all(|x| x == 0));
        // Shrinking is not a thing: a smaller length leaves the array as it is.
        v.try_resize(3, 9).unwrap();
        assert_eq!(v.len(), per_chunk * 2 + 3);
    }

    #[test]
    fn a_refused_piece_leaves_the_array_as_it_was() {
        use crate::alloc::Meter;
        let arena = Arena::try_new(16, 0, u64::MAX, Meter::try_new(64 << 10).unwrap()).unwrap();
        let mut v = ChunkVec::<u32>::new(&arena);
        v.try_resize(1000, 3).unwrap();
        assert!(v.try_resize(MAX_BLOCK, 4).is_err());
        crate::alloc::refusal::take();
        assert_eq!(v.len(), 1000);
        assert!(v.iter().all(|x| x == 3));
        v.debug_check_consistency();
    }
}
