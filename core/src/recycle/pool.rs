//! A small pool of objects kept for reuse, split per CPU: a thread gives to and takes from its
//! CPU's part, so parts are rarely contended and their cache lines stay where they are used.
//!
//! Each part holds at most `per_part` objects, each under a tag (a hash of what it is for);
//! giving to a full part pushes out its oldest (a part is a ring, so that moves no other),
//! which the caller drops after the part's lock is released. Taking looks from the newest, at
//! the tags first, so that a miss reads no object; a part with no match lends from the others,
//! so a thread that moved to another CPU still finds what it kept.
//! Internal temporary tables go here when they close ([`crate::recycle`]).

use crate::cpu::{Padded, PerCpu, MAX_PARTS};
use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};

pub struct Pool<T> {
    parts: PerCpu<Mutex<VecDeque<(u64, T)>>>,
    per_part: usize,
}

impl<T> std::fmt::Debug for Pool<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("held", &self.len())
            .field("per_part", &self.per_part)
            .finish()
    }
}

impl<T> Pool<T> {
    pub const fn new(per_part: usize) -> Pool<T> {
        Pool {
            parts: PerCpu::new([const { Padded(Mutex::new(VecDeque::new())) }; MAX_PARTS]),
            per_part,
        }
    }

    fn lock(&self, i: usize) -> MutexGuard<'_, VecDeque<(u64, T)>> {
        // The lock is held only for pushes, removals and comparisons, which do not panic in a
        // way that leaves the ring inconsistent.
        self.parts.get(i).lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The newest object under `tag` for which `wanted` holds, taken out: from this CPU's
    /// part, else from the others in use, as the block cache lends between its shards. A
    /// thread that moved to another CPU then finds the tables it left on the one before
    /// instead of building new ones.
    pub fn take(&self, tag: u64, wanted: impl Fn(&T) -> bool) -> Option<T> {
        self.take_from(self.parts.here(), self.parts.in_use(), tag, wanted)
    }

    /// Keeps `item` under `tag` in this CPU's part; returns the part's oldest object when it
    /// was full.
    #[must_use = "the object pushed out is dropped by the caller, after the lock"]
    pub fn give(&self, tag: u64, item: T) -> Option<T> {
        self.give_to(self.parts.here(), tag, item)
    }

    /// [`take`](Self::take) from part `first`, then from the others of the first `n` parts.
    fn take_from(
        &self,
        first: usize,
        n: usize,
        tag: u64,
        wanted: impl Fn(&T) -> bool,
    ) -> Option<T> {
        (first..first + n).find_map(|i| {
            let mut part = self.lock(i % n);
            let at = part.iter().rposition(|(t, x)| *t == tag && wanted(x))?;
            part.remove(at).map(|(_, x)| x)
        })
    }

    /// [`give`](Self::give) to part `i`.
    fn give_to(&self, i: usize, tag: u64, item: T) -> Option<T> {
        if self.per_part == 0 {
            return Some(item);
        }
        let mut part = self.lock(i);
        // The oldest is at the front: pushing it out moves no other (a ring, not a vector).
        let out = if part.len() >= self.per_part {
            part.pop_front().map(|(_, x)| x)
        } else {
            None
        };
        if part.capacity() == 0 {
            part.reserve_exact(self.per_part);
        }
        part.push_back((tag, item));
        out
    }

    /// Everything every part holds, taken out.
    pub fn drain(&self) -> Vec<T> {
        (0..MAX_PARTS)
            .flat_map(|i| std::mem::take(&mut *self.lock(i)))
            .map(|(_, x)| x)
            .collect()
    }

    /// Objects held, over every part.
    pub fn len(&self) -> usize {
        self.fold(0, |n, _| n + 1)
    }

    /// `f` over every object held, part by part (each part locked while it is read).
    pub fn fold<A>(&self, init: A, mut f: impl FnMut(A, &T) -> A) -> A {
        (0..MAX_PARTS).fold(init, |acc, i| {
            self.lock(i).iter().fold(acc, |acc, (_, x)| f(acc, x))
        })
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks the invariants; panics on a violation.
    #[cfg(test)]
    pub fn debug_check_consistency(&self) {
        for i in 0..MAX_PARTS {
            assert!(
                self.lock(i).len() <= self.per_part,
                "part {i} over its bound"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Pool;
    use proptest::prelude::*;

    #[test]
    fn takes_the_newest_match_and_pushes_out_the_oldest() {
        // One part named, so that the test thread moving between CPUs changes nothing.
        let pool = Pool::new(3);
        for x in [1, 2, 11, 3] {
            // The fourth give pushes out the oldest, 1.
            if let Some(out) = pool.give_to(0, x % 10, x) {
                assert_eq!(out, 1);
            }
        }
        assert_eq!(pool.len(), 3);
        assert_eq!(pool.take_from(0, 1, 1, |_| true), Some(11));
        assert_eq!(pool.take_from(0, 1, 1, |_| true), None);
        assert_eq!(
            pool.take_from(0, 1, 2, |&x| x == 12),
            None,
            "the tag and the test must both hold"
        );
        assert_eq!(pool.take_from(0, 1, 2, |&x| x == 2), Some(2));
        pool.debug_check_consistency();
        assert_eq!(pool.drain(), vec![3]);
        assert!(pool.is_empty());
        let none: Pool<u8> = Pool::new(0);
        assert_eq!(none.give(0, 7), Some(7), "a pool of no room keeps nothing");
    }

    #[test]
    fn a_part_without_a_match_takes_from_the_others() {
        let pool = Pool::new(3);
        assert_eq!(pool.give_to(1, 5, 50), None);
        assert_eq!(pool.give_to(0, 6, 60), None);
        assert_eq!(
            pool.take_from(0, 1, 5, |_| true),
            None,
            "part 0 alone holds none under 5"
        );
        assert_eq!(
            pool.take_from(0, 2, 5, |_| true),
            Some(50),
            "part 1 lends it"
        );
        assert_eq!(
            pool.take_from(1, 2, 6, |_| true),
            Some(60),
            "and part 0 from part 1"
        );
        assert!(pool.is_empty());
    }

    proptest! {

        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::testing::cases(256)))]
        /// Against a model of one part (the test thread may move between CPUs, so the model
        /// is the multiset of what the pool holds): nothing is lost or made up, and a take
        /// finds a match wherever it is held.
        #[test]
        fn what_goes_in_comes_out_once(ops in proptest::collection::vec((any::<bool>(), 0u8..4), 0..100)) {
            let pool = Pool::new(4);
            let mut held: Vec<u8> = Vec::new();
            for (give, x) in ops {
                if give {
                    held.push(x);
                    if let Some(out) = pool.give(u64::from(x % 2), x) {
                        let i = held.iter().position(|&h| h == out).unwrap();
                        held.remove(i);
                    }
                } else {
                    let got = pool.take(u64::from(x % 2), |&h| h == x);
                    prop_assert_eq!(got.is_some(), held.contains(&x));
                    if let Some(got) = got {
                        prop_assert_eq!(got, x);
                        let i = held.iter().position(|&h| h == got).unwrap();
                        held.remove(i);
                    }
                }
                pool.debug_check_consistency();
                prop_assert_eq!(pool.len(), held.len());
            }
            let mut rest = pool.drain();
            rest.sort();
            held.sort();
            prop_assert_eq!(rest, held);
        }
    }
}
