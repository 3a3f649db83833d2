//! The arena (a table's index allocator) under allocate, grow, shrink and free patterns from
//! the input, with allocation failures: every live piece is aligned, inside the arena's
//! blocks' bytes, never overlapping another, and keeps its contents (each is filled with its
//! own byte and checked before it is freed), also after every piece is freed at once with the
//! blocks kept (`clear_keeping_blocks`, as a kept table's packed rows are). Then the block
//! cache under take and give.
#![no_main]

use allocator_api2::alloc::{Allocator, Layout};
use libfuzzer_sys::fuzz_target;
use rheap_core::alloc::cache::BlockCache;
use rheap_core::alloc::{system, Arena};
use std::ptr::NonNull;

struct Live {
    ptr: NonNull<u8>,
    layout: Layout,
    fill: u8,
}

fn check(l: &Live) {
    // SAFETY: a live allocation of `layout.size()` bytes that this test filled.
    let bytes = unsafe { std::slice::from_raw_parts(l.ptr.as_ptr(), l.layout.size()) };
    assert!(
        bytes.iter().all(|&b| b == l.fill),
        "a piece's contents changed"
    );
}

fn fill(l: &Live) {
    // SAFETY: a live allocation of `layout.size()` bytes.
    unsafe { std::ptr::write_bytes(l.ptr.as_ptr(), l.fill, l.layout.size()) };
}

fuzz_target!(|data: &[u8]| {
    let mut arena = Arena::new(16, u64::from(data.first().copied().unwrap_or(1)), 1 << 26);
    let mut live: Vec<Live> = Vec::new();
    let mut n = 0u8;
    for op in data.get(1..).unwrap_or(&[]).chunks(3) {
        let &[code, x, y] = op else { break };
        if code & 0x80 != 0 {
            system::fail_after(Some(u64::from(y % 2)));
        }
        // Sizes from 1 byte to past the arena's largest shared piece (64 KiB).
        let size = match code % 4 {
            0 => usize::from(x) + 1,
            1 => (usize::from(x) + 1) * 64,
            2 => 1usize << (x % 18),
            _ => usize::from(x) * 300 + 1,
        };
        let align = 1usize << (y % 5);
        match (code >> 2) % 4 {
            0 | 1 => {
                let layout = Layout::from_size_align(size, align).unwrap();
                if let Ok(p) = arena.allocate(layout) {
                    let ptr = p.cast::<u8>();
                    assert_eq!(ptr.as_ptr() as usize % align, 0, "aligned");
                    n = n.wrapping_add(1);
                    let l = Live {
                        ptr,
                        layout,
                        fill: n,
                    };
                    fill(&l);
                    live.push(l);
                }
            }
            2 if x == 0 && y % 4 == 0 => {
                // Every piece freed at once; the blocks stay for the next pieces.
                live.drain(..).for_each(|l| check(&l));
                let held = arena.bytes();
                arena.clear_keeping_blocks();
                assert!(arena.bytes() <= held, "no block taken");
            }
            2 if !live.is_empty() => {
                let l = live.swap_remove(usize::from(x) % live.len());
                check(&l);
                // SAFETY: allocated by this arena with this layout, freed once.
                unsafe { arena.deallocate(l.ptr, l.layout) };
            }
            3 if !live.is_empty() => {
                // Grow or shrink, as the collections do: contents kept up to the smaller size.
                let i = usize::from(x) % live.len();
                let old = &live[i];
                check(old);
                let new = Layout::from_size_align(size, old.layout.align()).unwrap();
                // SAFETY: a live allocation of this arena with `old.layout`.
                let r = unsafe {
                    if new.size() >= old.layout.size() {
                        arena.grow(old.ptr, old.layout, new)
                    } else {
                        arena.shrink(old.ptr, old.layout, new)
                    }
                };
                if let Ok(p) = r {
                    let kept = old.layout.size().min(new.size());
                    // SAFETY: the new allocation has at least `kept` bytes.
                    let bytes =
                        unsafe { std::slice::from_raw_parts(p.cast::<u8>().as_ptr(), kept) };
                    assert!(bytes.iter().all(|&b| b == old.fill), "contents kept");
                    live[i] = Live {
                        ptr: p.cast(),
                        layout: new,
                        fill: old.fill,
                    };
                    fill(&live[i]);
                }
            }
            _ => {}
        }
        system::fail_after(None);
        // No two live pieces overlap.
        let mut spans: Vec<(usize, usize)> = live
            .iter()
            .map(|l| (l.ptr.as_ptr() as usize, l.layout.size()))
            .collect();
        spans.sort();
        for w in spans.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0, "pieces overlap");
        }
        arena.debug_check_consistency();
    }
    for l in live.drain(..) {
        check(&l);
        // SAFETY: allocated by this arena with this layout, freed once.
        unsafe { arena.deallocate(l.ptr, l.layout) };
    }
    arena.debug_check_consistency();

    // A private block cache: take and give blocks of the policy's sizes under a small bound.
    let cache = BlockCache::new(1 << 20, false);
    let mut held = Vec::new();
    for &b in data.iter().take(64) {
        let size = 4096usize << (b % 6);
        if b & 0x40 != 0 {
            if let Some(block) = cache.take(size) {
                assert_eq!(block.size(), size);
                held.push(block);
            }
        } else if let Some(block) = held.pop() {
            cache.give(block);
        }
        cache.debug_check_consistency();
    }
    for block in held {
        cache.give(block);
    }
    cache.set_limit(0);
    assert_eq!(cache.cached_bytes(), 0);
});
