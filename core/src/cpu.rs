//! Which CPU a thread runs on, for structures split per CPU (the block cache, the counters):
//! a thread then mostly touches its own CPU's part, and the parts' cache lines stay on their
//! CPUs instead of moving between them on every change.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The CPU this thread runs on (0 if the system cannot say; always 0 under Miri, which cannot
/// call `sched_getcpu`).
#[cfg(miri)]
pub fn current() -> usize {
    0
}

/// The CPU this thread runs on (0 if the system cannot say; always 0 under Miri, which cannot
/// call `sched_getcpu`).
#[cfg(not(miri))]
pub fn current() -> usize {
    extern "C" {
        fn sched_getcpu() -> std::ffi::c_int;
    }
    // SAFETY: sched_getcpu (glibc) takes nothing and only reads where the thread runs.
    usize::try_from(unsafe { sched_getcpu() }).unwrap_or(0)
}

/// CPUs this process may run on (at least 1), asked once.
pub fn count() -> usize {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    match COUNT.load(Ordering::Relaxed) {
        0 => {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            COUNT.store(n, Ordering::Relaxed);
            n
        }
        n => n,
    }
}

/// How many of at most `max` per-CPU parts are in use: one per CPU of the process.
pub fn parts(max: usize) -> usize {
    count().min(max)
}

/// The part (of at most `max`) that the running CPU uses.
pub fn part(max: usize) -> usize {
    let (cpu, n) = (current(), parts(max));
    // Usually the CPU's own number: no division.
    if cpu < n {
        cpu
    } else {
        cpu % n
    }
}

/// Parts a [`PerCpu`] has (CPUs beyond share them).
pub const MAX_PARTS: usize = 16;

/// A value per CPU of the process (up to [`MAX_PARTS`]), each on cache lines of its own:
/// the block cache's shards, the counters, the pool of kept tables.
#[derive(Debug)]
pub struct PerCpu<T> {
    parts: [Padded<T>; MAX_PARTS],
}

/// One part, alone on its cache lines (two lines: the adjacent-line prefetcher pairs them).
#[derive(Debug)]
#[repr(align(128))]
pub struct Padded<T>(pub T);

impl<T> PerCpu<T> {
    /// From every part's value: `PerCpu::new([const { Padded(value) }; MAX_PARTS])`.
    pub const fn new(parts: [Padded<T>; MAX_PARTS]) -> PerCpu<T> {
        PerCpu { parts }
    }

    /// Which part the running CPU uses.
    pub fn here(&self) -> usize {
        part(MAX_PARTS)
    }

    /// How many parts are in use: one per CPU of the process.
    pub fn in_use(&self) -> usize {
        parts(MAX_PARTS)
    }

    /// The running CPU's part.
    pub fn mine(&self) -> &T {
        self.get(self.here())
    }

    /// Part `i` (below [`MAX_PARTS`]).
    pub fn get(&self, i: usize) -> &T {
        &self.parts[i].0
    }

    /// Every part in use.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.parts[..self.in_use()].iter().map(|p| &p.0)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn there_is_a_cpu() {
        assert!(super::count() >= 1);
        // The CPU number is whatever the system says; it only has to be stable enough to use.
        let _ = super::current();
        assert!(super::part(16) < super::parts(16));
        assert_eq!(super::parts(1), 1);
    }
}
