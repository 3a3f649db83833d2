//! The plugin's heap memory: what its Rust code allocates outside blocks (a handler's row, key
//! and BLOB buffers, the compare scratch of each thread, table definitions and shares, the
//! registry of named tables, kept tables' structures).
//!
//! Inside `mariadbd` the plugin's global allocator is a [`Heap`] over the server's allocator
//! (`my_malloc` under performance_schema's `memory/rheap/heap`), so these bytes show in
//! performance_schema and in the server's `Memory_used`, as blocks do; [`used`] counts them for
//! `Rheap_heap_used` and the server-wide budget ([`super::budget`]). Unit tests keep the Rust
//! allocator.

use crate::cpu::{self, Padded, MAX_PARTS};
use std::alloc::{GlobalAlloc, Layout};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

/// The allocator a [`Heap`] takes its memory from: `my_malloc`, `my_realloc` and `my_free` in
/// the server.
pub trait Source {
    /// `size` bytes aligned to at least [`super::system::ALIGN`], or NULL.
    ///
    /// # Safety
    /// `size` is not 0.
    unsafe fn alloc(size: usize) -> *mut u8;
    /// The memory at `ptr` resized to `size` bytes, its contents kept up to the smaller size,
    /// or NULL with `ptr` left as it was.
    ///
    /// # Safety
    /// `ptr` came from this source and is not freed; `size` is not 0.
    unsafe fn realloc(ptr: *mut u8, size: usize) -> *mut u8;
    /// Frees what [`Source::alloc`] or [`Source::realloc`] returned.
    ///
    /// # Safety
    /// `ptr` came from this source and is not freed.
    unsafe fn free(ptr: *mut u8);
}

/// A global allocator over `S`: every allocation counted in [`used`], and, in builds with the
/// `failpoints` feature, the one [`super::system::fail_nth`] names refused.
#[derive(Debug)]
pub struct Heap<S>(PhantomData<fn() -> S>);

impl<S> Heap<S> {
    pub const fn new() -> Heap<S> {
        Heap(PhantomData)
    }
}

impl<S> Default for Heap<S> {
    fn default() -> Heap<S> {
        Heap::new()
    }
}

/// Bytes asked of the source, per CPU: a part may go below zero (wrapping) when memory is
/// freed on another CPU than the one that took it; only the sum means anything. The parts
/// are indexed by the CPU number alone ([`cpu::current`]): the allocator cannot ask how many
/// CPUs there are, which itself allocates.
static USED: [Padded<AtomicU64>; MAX_PARTS] = [const { Padded(AtomicU64::new(0)) }; MAX_PARTS];

fn count(delta: i64) {
    // Two's complement: adding a negative amount as u64 wraps to the subtraction.
    USED[cpu::current() % MAX_PARTS]
        .0
        .fetch_add(delta as u64, Ordering::Relaxed);
}

/// Bytes the plugin holds on its heap now (`Rheap_heap_used`).
pub fn used() -> u64 {
    let sum = USED
        .iter()
        .fold(0u64, |s, p| s.wrapping_add(p.0.load(Ordering::Relaxed)));
    // Parts read one after the other may miss an addition and see its subtraction.
    (sum as i64).max(0) as u64
}

/// The most a source's memory is aligned to.
const ALIGN: usize = super::system::ALIGN;

/// What is asked of the source for `layout`: an over-aligned layout gets room to move its
/// start to its alignment, and a word before it for the source's pointer.
fn asked(layout: Layout) -> Option<usize> {
    if layout.align() <= ALIGN {
        Some(layout.size())
    } else {
        layout.size().checked_add(layout.align())
    }
}

/// The bytes an allocation of `size` counts for: the server's allocator rounds every size up
/// to 8, and performance_schema counts that.
fn counted(size: usize) -> i64 {
    size.div_ceil(ALIGN).saturating_mul(ALIGN) as i64
}

#[inline]
fn may_allocate() -> bool {
    #[cfg(feature = "failpoints")]
    {
        super::system::may_allocate()
    }
    #[cfg(not(feature = "failpoints"))]
    {
        true
    }
}

// SAFETY: alloc returns NULL or memory of the layout's size and alignment (the source's is 8
// aligned; a larger alignment is made inside a larger block, see `asked`), which dealloc and
// realloc give back the way it was taken.
unsafe impl<S: Source> GlobalAlloc for Heap<S> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some(size) = asked(layout) else {
            return std::ptr::null_mut();
        };
        if !may_allocate() {
            return std::ptr::null_mut();
        }
        // SAFETY: GlobalAlloc's callers never ask for 0 bytes.
        let raw = unsafe { S::alloc(size) };
        if raw.is_null() {
            return raw;
        }
        count(counted(size));
        if layout.align() <= ALIGN {
            return raw;
        }
        // The first aligned address past one word: it and `size` bytes fit in what was asked.
        let offset = (raw as usize + ALIGN).next_multiple_of(layout.align()) - raw as usize;
        // SAFETY: offset ≤ align, and size + align bytes were asked: the word before the
        // aligned address and the layout's bytes after it are inside the allocation.
        unsafe {
            let aligned = raw.add(offset);
            aligned.cast::<*mut u8>().sub(1).write_unaligned(raw);
            aligned
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-counted(asked(layout).unwrap_or(0)));
        if layout.align() <= ALIGN {
            // SAFETY: `ptr` is what the source returned (alloc's contract).
            unsafe { S::free(ptr) }
        } else {
            // SAFETY: alloc wrote the source's pointer in the word before `ptr`.
            unsafe { S::free(ptr.cast::<*mut u8>().sub(1).read_unaligned()) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() > ALIGN {
            // Moved by hand: a new block, the bytes, the old one freed.
            // SAFETY: the caller's contract: new_size is not 0 and fits the alignment.
            let new =
                unsafe { self.alloc(Layout::from_size_align_unchecked(new_size, layout.align())) };
            if !new.is_null() {
                // SAFETY: both hold at least the smaller size, and are distinct blocks.
                unsafe {
                    std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
            }
            return new;
        }
        if !may_allocate() {
            return std::ptr::null_mut();
        }
        // SAFETY: `ptr` came from the source and new_size is not 0 (the caller's contract).
        let new = unsafe { S::realloc(ptr, new_size) };
        if !new.is_null() {
            count(counted(new_size) - counted(layout.size()));
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The C library's allocator, as the server's is. `my_malloc` asks `malloc` for at least
    /// its 8-byte header more, so its memory is always aligned to [`ALIGN`]; a C library may
    /// align a block smaller than that less (Miri's does), so the source asks for at least
    /// `ALIGN` bytes, as [`Source`] requires.
    struct Libc;

    extern "C" {
        fn malloc(size: usize) -> *mut u8;
        fn realloc(ptr: *mut u8, size: usize) -> *mut u8;
        fn free(ptr: *mut u8);
    }

    impl Source for Libc {
        unsafe fn alloc(size: usize) -> *mut u8 {
            // SAFETY: malloc takes any size.
            unsafe { malloc(size.max(ALIGN)) }
        }
        unsafe fn realloc(ptr: *mut u8, size: usize) -> *mut u8 {
            // SAFETY: `ptr` came from malloc (the caller's contract).
            unsafe { realloc(ptr, size.max(ALIGN)) }
        }
        unsafe fn free(ptr: *mut u8) {
            // SAFETY: `ptr` came from malloc (the caller's contract).
            unsafe { free(ptr) }
        }
    }

    #[test]
    fn every_alignment_is_kept_and_every_byte_counted_back() {
        let heap = Heap::<Libc>::new();
        let before = used();
        for align in [1, 8, 16, 64, 128, 4096] {
            for size in [1, 7, 100, 5000] {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: a non-zero size; the memory is written within it and freed once.
                unsafe {
                    let p = heap.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "align {align}");
                    p.write_bytes(0xA5, size);
                    let q = heap.realloc(p, layout, size * 3);
                    assert!(!q.is_null());
                    assert_eq!(q as usize % align, 0, "align {align} after realloc");
                    assert!((0..size).all(|i| *q.add(i) == 0xA5), "bytes kept");
                    q.add(size).write_bytes(0x5A, size * 2);
                    heap.dealloc(q, Layout::from_size_align(size * 3, align).unwrap());
                }
            }
        }
        // Other tests allocate through the Rust allocator, not this heap: the count is back.
        assert_eq!(used(), before);
    }
}
