//! HASH indexes: rows grouped by key image, in HEAP's order.
//!
//! HEAP keeps a hash index as a linear hash whose chains put a new entry first and keep the
//! relative order of the others through splits, merges and deletes. Rows with equal keys (under
//! the collation) always share a chain, so a lookup returns them newest first: that is the order
//! rheap keeps per key. Each group also remembers HEAP's hash value of its key, so the
//! statistics HEAP derives from its chain count (`hash_buckets`) come out the same.

use crate::alloc::Arena;
use crate::error::Result;
use crate::key::{hp_blength, hp_mask};
use crate::records::Pos;
use allocator_api2::vec::Vec as AVec;
use hashbrown::HashTable;
use std::collections::HashSet;

#[derive(Debug)]
struct Group {
    /// The key image.
    key: AVec<u8, Arena>,
    /// HEAP's hash of the key (equal keys hash equally).
    hash: u64,
    /// The oldest row with this key, then the others, oldest first: a key that only one row
    /// has (most keys of a GROUP BY or DISTINCT table) needs no list.
    first: Pos,
    more: AVec<Pos, Arena>,
}

impl Group {
    fn len(&self) -> usize {
        1 + self.more.len()
    }

    /// Row `i`, oldest first.
    fn row(&self, i: usize) -> Option<Pos> {
        match i {
            0 => Some(self.first),
            i => self.more.get(i - 1).copied(),
        }
    }

    fn newest_first(&self) -> impl Iterator<Item = Pos> + '_ {
        self.more
            .iter()
            .rev()
            .copied()
            .chain(std::iter::once(self.first))
    }

    /// Removes row `i` (oldest first); false when the group is left empty.
    fn remove(&mut self, i: usize) -> bool {
        match i {
            0 if self.more.is_empty() => return false,
            0 => self.first = self.more.remove(0),
            i => {
                self.more.remove(i - 1);
            }
        }
        true
    }
}

#[derive(Debug)]
pub struct HashIndex {
    arena: Arena,
    groups: HashTable<Group, Arena>,
    entries: u64,
}

/// The table's own hash of a key image (FxHash's mix, a word at a time): HEAP's hash is only
/// kept for statistics, and spreads some keys poorly.
fn hash_image(image: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = image.len() as u64;
    let mut words = image.chunks_exact(8);
    for w in &mut words {
        let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        h = (h.rotate_left(5) ^ w).wrapping_mul(K);
    }
    let mut tail = [0u8; 8];
    tail[..words.remainder().len()].copy_from_slice(words.remainder());
    h = (h.rotate_left(5) ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    h ^ (h >> 29)
}

fn rehash(g: &Group) -> u64 {
    hash_image(&g.key)
}

impl HashIndex {
    pub fn new(arena: &Arena) -> HashIndex {
        HashIndex {
            arena: arena.clone(),
            groups: HashTable::new_in(arena.clone()),
            entries: 0,
        }
    }

    fn group(&self, image: &[u8]) -> Option<&Group> {
        self.groups
            .find(hash_image(image), |g| g.key.as_slice() == image)
    }

    /// Whether some row has this key.
    pub fn contains(&self, image: &[u8]) -> bool {
        self.group(image).is_some()
    }

    /// Adds `pos` under `image` as the newest row of its key; `heap_hash` (HEAP's hash of the
    /// key) is only asked for a key not there yet.
    pub fn insert(
        &mut self,
        image: &[u8],
        heap_hash: impl FnOnce() -> Result<u64>,
        pos: Pos,
    ) -> Result<()> {
        let h = hash_image(image);
        // The key is copied only for a new group: rows with a key already there add no
        // allocation beyond their own entry.
        if let Some(g) = self.groups.find_mut(h, |g| g.key.as_slice() == image) {
            g.more.try_reserve(1)?;
            g.more.push(pos);
        } else {
            let hash = heap_hash()?;
            // A temporary table's groups arrive one by one: start with room for a few, not
            // one at a time.
            self.groups
                .try_reserve(1.max(16 - self.groups.capacity().min(16)), rehash)?;
            let mut key = AVec::new_in(self.arena.clone());
            key.try_reserve_exact(image.len())?;
            key.extend_from_slice(image);
            let group = Group {
                key,
                hash,
                first: pos,
                more: AVec::new_in(self.arena.clone()),
            };
            self.groups.insert_unique(h, group, rehash);
        }
        self.entries += 1;
        Ok(())
    }

    /// Removes `pos` from under `image`; false if it was not there.
    pub fn remove(&mut self, image: &[u8], pos: Pos) -> bool {
        let Ok(mut entry) = self
            .groups
            .find_entry(hash_image(image), |g| g.key.as_slice() == image)
        else {
            return false;
        };
        let g = entry.get_mut();
        let Some(i) = (0..g.len()).rev().find(|&i| g.row(i) == Some(pos)) else {
            return false;
        };
        if !g.remove(i) {
            entry.remove();
        }
        self.entries -= 1;
        true
    }

    /// The rows with key `image`, newest first.
    pub fn lookup(&self, image: &[u8]) -> impl Iterator<Item = Pos> + '_ {
        self.group(image).into_iter().flat_map(Group::newest_first)
    }

    /// The row after `pos` among the rows with key `image` (newest first). When `pos` is no
    /// longer there (deleted mid-scan), `at` — how many rows came before it — says where to
    /// resume.
    pub fn next_after(&self, image: &[u8], pos: Pos, at: usize) -> Option<(Pos, usize)> {
        let g = self.group(image)?;
        let newest_first = |i: usize| g.len().checked_sub(i + 1).and_then(|j| g.row(j));
        let i = match (0..g.len()).find(|&i| newest_first(i) == Some(pos)) {
            Some(i) => i + 1,
            None => at,
        };
        newest_first(i).map(|p| (p, i))
    }

    pub fn clear(&mut self) {
        self.groups = HashTable::new_in(self.arena.clone());
        self.entries = 0;
    }

    /// Entries in the index (one per row).
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// HEAP's `hash_buckets`: how many chains its linear hash has for these keys when the table
    /// holds `records` rows.
    pub fn hash_buckets(&self, records: u64) -> u64 {
        let blength = hp_blength(records);
        let chains: HashSet<u64> = self
            .groups
            .iter()
            .map(|g| hp_mask(g.hash, blength, records))
            .collect();
        chains.len() as u64
    }

    /// Checks the invariants; panics on a violation.
    pub fn debug_check_consistency(&self) {
        let mut seen = HashSet::new();
        let mut n = 0u64;
        for g in self.groups.iter() {
            assert_eq!(
                self.group(&g.key).map(|f| f as *const Group),
                Some(g as *const Group),
                "every group is found by its key"
            );
            for p in g.newest_first() {
                assert!(seen.insert(p), "row {p} is in the index once");
            }
            n += g.len() as u64;
        }
        assert_eq!(n, self.entries, "entry count");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_keys_come_newest_first_and_keep_order_after_deletes() {
        let mut h = HashIndex::new(&Arena::new(16, 0, u64::MAX));
        for p in 0..4 {
            h.insert(b"k", || Ok(7), p).unwrap();
        }
        h.insert(b"j", || Ok(8), 9).unwrap();
        assert_eq!(h.lookup(b"k").collect::<Vec<_>>(), [3, 2, 1, 0]);
        assert!(h.remove(b"k", 2));
        assert!(!h.remove(b"k", 2));
        assert_eq!(h.lookup(b"k").collect::<Vec<_>>(), [3, 1, 0]);
        // Row 2 was deleted while a scan stood on it, after one row (3) had been read.
        assert_eq!(h.next_after(b"k", 2, 1), Some((1, 1)));
        assert_eq!(h.next_after(b"k", 1, 1), Some((0, 2)));
        assert_eq!(h.next_after(b"k", 0, 2), None);
        h.debug_check_consistency();
        assert_eq!(h.entries(), 4);
    }

    #[test]
    fn buckets_count_distinct_chain_positions() {
        let mut h = HashIndex::new(&Arena::new(16, 0, u64::MAX));
        // Hashes 1 and 5 share position 1 of a 4-row table (blength 8, 5 & 7 = 5 >= 4 -> 1).
        h.insert(b"a", || Ok(1), 0).unwrap();
        h.insert(b"b", || Ok(5), 1).unwrap();
        h.insert(b"c", || Ok(2), 2).unwrap();
        h.insert(b"c", || Ok(2), 3).unwrap();
        assert_eq!(h.hash_buckets(4), 2);
        h.clear();
        assert_eq!(h.hash_buckets(0), 0);
    }
}
