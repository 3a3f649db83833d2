//! Where blocks come from: the server's allocator inside the server, the Rust allocator in
//! unit tests; and the counters of what was taken from it.
//!
//! Inside `mariadbd` the plugin installs [`Source`] functions that call the server's
//! `my_malloc`/`my_free` under rheap's own performance_schema memory key, so the memory shows
//! in `performance_schema.memory_summary_*` and in the server's `Memory_used`. A block is
//! asked for with exactly its size, so that all three count the same bytes: `my_malloc`
//! returns memory aligned to [`ALIGN`] (8) bytes, which every structure rheap keeps in its
//! blocks needs at most; a source that gave less would fail the allocation.

use crate::status::{self, Counter};
use std::alloc::Layout;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::OnceLock;

/// The alignment of every block, and the most any piece of one has.
pub const ALIGN: usize = 8;

/// The functions that allocate and free system memory.
#[derive(Debug, Clone, Copy)]
pub struct Source {
    /// Returns `size` bytes aligned to at least 8, or NULL.
    pub alloc: unsafe extern "C" fn(size: usize) -> *mut c_void,
    /// Frees what `alloc` returned.
    pub free: unsafe extern "C" fn(ptr: *mut c_void),
    /// Moves `delta` bytes of the server's memory accounting from the global count to the
    /// running thread's (back when negative): an internal temporary table's memory is its
    /// thread's, as HEAP's thread-specific allocations are.
    pub move_to_thread: unsafe extern "C" fn(delta: i64),
}

static SOURCE: OnceLock<Source> = OnceLock::new();

/// Makes `source` the provider of system memory. Only the first call counts (the plugin's
/// code stays loaded across UNINSTALL/INSTALL, and its functions with it).
pub fn set_source(source: Source) {
    let _ = SOURCE.set(source);
}

/// Moves `delta` bytes of memory accounting to the running thread (see
/// [`Source::move_to_thread`]); nothing without a source (unit tests).
pub fn move_to_thread(delta: i64) {
    if let Some(source) = SOURCE.get() {
        // SAFETY: the source's function takes any delta; it only moves counts.
        unsafe { (source.move_to_thread)(delta) }
    }
}

/// Test switch: allocations left before they fail (negative: never fail).
static FAIL_AFTER: AtomicI64 = AtomicI64::new(-1);

/// Makes the block allocator fail after `n` more blocks (`None`: never). Blocks a table takes
/// from the cache count as well, so the failure comes at the same block whatever is cached.
pub fn fail_after(n: Option<u64>) {
    FAIL_AFTER.store(
        n.map_or(-1, |n| n.min(i64::MAX as u64) as i64),
        Ordering::Relaxed,
    );
}

/// Counts one block against [`fail_after`] and [`fail_nth`]: false when this block must fail.
pub(crate) fn may_take_block() -> bool {
    let blocks = FAIL_AFTER
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| match n {
            n if n > 0 => Some(n - 1),
            _ => None,
        })
        .map_or_else(|n| n < 0, |_| true);
    blocks && may_allocate()
}

/// Test switch: allocations of any kind (blocks, and the plugin's own heap memory in builds
/// with the `failpoints` feature, [`crate::alloc::heap`]) until the one that fails; 0 or
/// negative: none fails.
static FAIL_NTH: AtomicI64 = AtomicI64::new(-1);

/// Makes the `n`th allocation from now fail, once (`None`: none): a block, or in builds with the
/// `failpoints` feature any heap allocation of the plugin's.
pub fn fail_nth(n: Option<u64>) {
    FAIL_NTH.store(
        n.map_or(-1, |n| n.min(i64::MAX as u64) as i64),
        Ordering::Relaxed,
    );
}

/// Whether the next allocation may be made, for an allocation that cannot fail cleanly
/// itself ([`crate::alloc::fallible::try_arc`]): when it is the one [`fail_nth`] names, that failure is taken
/// here (false) and the allocation is not made.
pub fn next_may_allocate() -> bool {
    FAIL_NTH
        .compare_exchange(1, 0, Ordering::Relaxed, Ordering::Relaxed)
        .is_err()
}

/// Counts one allocation against [`fail_nth`]: false for the one that must fail.
#[inline]
pub fn may_allocate() -> bool {
    // The common case (no failure armed) is one load.
    if FAIL_NTH.load(Ordering::Relaxed) <= 0 {
        return true;
    }
    // Counted down when armed; the allocation that takes it from 1 to 0 is the one to fail.
    FAIL_NTH.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
        (n > 0).then(|| n - 1)
    }) != Ok(1)
}

/// A block of system memory, aligned to [`ALIGN`], that must be given back with
/// [`RawBlock::free`] (the cache does that; dropping one leaks it).
#[derive(Debug)]
pub struct RawBlock {
    /// What the source returned: the block's first byte.
    base: NonNull<u8>,
    size: usize,
}

// SAFETY: a RawBlock owns its memory exclusively; the source's free may run on any thread
// (my_free and the Rust allocator both allow that).
unsafe impl Send for RawBlock {}
// SAFETY: `&RawBlock` only reads the pointer and size; what is done with the bytes behind
// them is the owner's business (a table reads its blocks through `&self` only).
unsafe impl Sync for RawBlock {}

impl RawBlock {
    /// `size` usable bytes from the system, or None.
    pub fn alloc(size: usize) -> Option<RawBlock> {
        let layout = Layout::from_size_align(size.max(1), ALIGN).ok()?;
        let base = match SOURCE.get() {
            // SAFETY: the installed source returns NULL or `size` writable bytes.
            Some(s) => unsafe { (s.alloc)(layout.size()).cast::<u8>() },
            // SAFETY: the layout has a non-zero size.
            None => unsafe { std::alloc::alloc(layout) },
        };
        let block = RawBlock {
            base: NonNull::new(base)?,
            size,
        };
        if base.align_offset(ALIGN) != 0 {
            // Not reached with my_malloc; a block less aligned is refused, not misused.
            block.free();
            return None;
        }
        status::add(Counter::BlocksAllocated, 1);
        Some(block)
    }

    /// Gives the memory back to the system.
    pub fn free(self) {
        match SOURCE.get() {
            // SAFETY: `base` came from this source's alloc (the source is set once, before any
            // block is taken) and is freed once, as `self` is consumed.
            Some(s) => unsafe { (s.free)(self.base.as_ptr().cast::<c_void>()) },
            // SAFETY: allocated above by the Rust allocator with this layout.
            None => unsafe {
                std::alloc::dealloc(
                    self.base.as_ptr(),
                    Layout::from_size_align_unchecked(self.size.max(1), ALIGN),
                )
            },
        }
    }

    pub fn ptr(&self) -> NonNull<u8> {
        self.base
    }

    pub fn size(&self) -> usize {
        self.size
    }
}
