//! The plugin's global allocator: every heap allocation of its Rust code goes to the server's
//! allocator under performance_schema's `memory/rheap/heap`, and is counted in
//! `Rheap_heap_used` ([`rheap_core::alloc::heap`]).

use rheap_core::alloc::heap::{Heap, Source};
use rheap_sys::shim;

/// `my_malloc`, `my_realloc` and `my_free`, through the shim.
#[derive(Debug)]
pub struct Server;

impl Source for Server {
    unsafe fn alloc(size: usize) -> *mut u8 {
        // SAFETY: my_malloc takes any size; it returns NULL or `size` bytes aligned to 8.
        unsafe { shim::rheap_heap_alloc(size).cast() }
    }

    unsafe fn realloc(ptr: *mut u8, size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from rheap_heap_alloc or rheap_heap_realloc (the caller's
        // contract); my_realloc keeps it on failure.
        unsafe { shim::rheap_heap_realloc(ptr.cast(), size).cast() }
    }

    unsafe fn free(ptr: *mut u8) {
        // SAFETY: `ptr` came from rheap_heap_alloc or rheap_heap_realloc, once.
        unsafe { shim::rheap_heap_free(ptr.cast()) }
    }
}

#[global_allocator]
static HEAP: Heap<Server> = Heap::new();
