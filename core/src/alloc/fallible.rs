//! Allocation that fails cleanly: helpers that report running out of memory as
//! [`Error::OutOfMemory`](crate::error::Error::OutOfMemory) where the standard library would
//! abort, and the trimming of row buffers a large row grew.

use super::system;

/// `len` zero bytes, or `OutOfMemory` (where `vec![0; len]` would abort the server).
pub fn zeroed(len: usize) -> crate::error::Result<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)?;
    v.resize(len, 0);
    Ok(v)
}

/// `v` made `len` long with `T::default()` items (zeros for bytes), or `OutOfMemory`:
/// `resize` would abort.
pub fn resize_default<T: Default>(v: &mut Vec<T>, len: usize) -> crate::error::Result<()> {
    v.try_reserve(len.saturating_sub(v.len()))?;
    v.resize_with(len, T::default);
    Ok(())
}

/// `s` as an owned string, or `OutOfMemory` (`to_owned` would abort the server).
pub fn try_string(s: &str) -> crate::error::Result<String> {
    let mut owned = String::new();
    owned.try_reserve_exact(s.len())?;
    owned.push_str(s);
    Ok(owned)
}

/// The items of `it` (of known length) in a vector whose memory is asked for first, or
/// `OutOfMemory`: `collect` would abort the server.
pub fn try_collect<T>(it: impl ExactSizeIterator<Item = T>) -> crate::error::Result<Vec<T>> {
    try_collect_ok(it.map(Ok))
}

/// As [`try_collect`], for items that may fail themselves: the first failure.
pub fn try_collect_ok<T>(
    it: impl ExactSizeIterator<Item = crate::error::Result<T>>,
) -> crate::error::Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(it.len())?;
    for item in it {
        v.push(item?);
    }
    Ok(v)
}

/// `Box::new(value)`, or `OutOfMemory` (stable Rust has no `Box::try_new`): a vector of one
/// item, whose memory is asked for first, becomes the box without moving.
pub fn try_box<T>(value: T) -> crate::error::Result<Box<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(1)?;
    v.push(value);
    // The vector's capacity is its length, so this keeps its allocation.
    let slice: Box<[T]> = v.into_boxed_slice();
    // SAFETY: a slice of one `T` has the layout of a `T`, and the pointer comes from a box
    // that is given up here, so the new box owns the allocation alone.
    Ok(unsafe { Box::from_raw(Box::into_raw(slice).cast::<T>()) })
}

/// `Arc::new(value)`, after asking for as much memory as it takes: `OutOfMemory` when that is
/// refused. Stable Rust has no `Arc::try_new`; between the question and `Arc::new` another
/// thread could take the memory, so this narrows the abort to that window (and makes every
/// failure the `failpoints` build injects a clean one) rather than closing it.
pub fn try_arc<T>(value: T) -> crate::error::Result<std::sync::Arc<T>> {
    use std::alloc::{GlobalAlloc, System};
    if !system::next_may_allocate() {
        return Err(crate::error::Error::OutOfMemory);
    }
    // An Arc's allocation: two counters, then the value. Asked of the system allocator
    // directly, so that the question is not itself counted as the allocation.
    let layout = std::alloc::Layout::new::<(usize, usize, T)>();
    if layout.size() > 0 {
        // SAFETY: the layout has a non-zero size; the block is freed at once with it.
        unsafe {
            let p = System.alloc(layout);
            if p.is_null() {
                return Err(crate::error::Error::OutOfMemory);
            }
            System.dealloc(p, layout);
        }
    }
    Ok(std::sync::Arc::new(value))
}

/// The most bytes a reused row buffer keeps (see [`trim`]), unless rows are larger.
pub const KEEP_BUFFER: usize = 64 * 1024;

/// Frees `v`'s memory when it holds room for more than [`KEEP_BUFFER`] bytes and twice a
/// record of `rec_len` bytes (what a large BLOB made it take), without allocating:
/// `shrink_to` would move it. A buffer for ordinary rows keeps its room.
pub fn trim(v: &mut Vec<u8>, rec_len: usize) {
    if v.capacity() > KEEP_BUFFER.max(rec_len.saturating_mul(2)) {
        *v = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimming_frees_only_room_a_large_row_took() {
        let mut small = Vec::with_capacity(1000);
        small.push(1u8);
        trim(&mut small, 100);
        assert_eq!(small, [1]);
        let mut big = vec![0u8; KEEP_BUFFER + 1];
        trim(&mut big, 100);
        assert_eq!(big.capacity(), 0);
        // Buffers for rows that are large themselves keep room for two of them.
        let mut wide = vec![0u8; 3 * KEEP_BUFFER];
        trim(&mut wide, 2 * KEEP_BUFFER);
        assert_eq!(wide.len(), 3 * KEEP_BUFFER);
    }

    #[test]
    fn fallible_helpers_give_what_the_infallible_ones_would() {
        assert_eq!(zeroed(3).unwrap(), [0, 0, 0]);
        assert_eq!(try_string("é").unwrap(), "é");
        let mut v = vec![7u8];
        resize_default(&mut v, 3).unwrap();
        assert_eq!(v, [7, 0, 0]);
        assert_eq!(try_collect([1, 2, 3].into_iter()).unwrap(), [1, 2, 3]);
        let e = try_collect_ok([Ok(1), Err(crate::error::Error::OutOfMemory)].into_iter());
        assert_eq!(e, Err(crate::error::Error::OutOfMemory));
        assert_eq!(*try_box(5u64).unwrap(), 5);
        assert_eq!(*try_arc(String::from("x")).unwrap(), "x");
        let mut d: Vec<Option<u8>> = Vec::new();
        resize_default(&mut d, 2).unwrap();
        assert_eq!(d, [None, None]);
    }
}
