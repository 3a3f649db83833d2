//! HASH indexes: rows grouped by key image, in HEAP's order.
//!
//! HEAP keeps a hash index as a linear hash whose chains put a new entry first and keep the
//! relative order of the others through splits, merges and deletes. Rows with equal keys (under
//! the collation) always share a chain, so a lookup returns them newest first: that is the order
//! rheap keeps per key. The statistics HEAP derives from its chain count (`hash_buckets`) come
//! out the same: they are computed from HEAP's hash of each key, taken from a row of the key
//! when the statistics are asked for.

use crate::alloc::Arena;
use crate::error::Result;
use crate::key::{bytes_eq, hp_blength, hp_mask};
use crate::records::Pos;
use allocator_api2::vec::Vec as AVec;
use hashbrown::hash_table::Entry;
use hashbrown::HashTable;
use std::collections::HashSet;

/// Groups a hash index first has room for (in 64 buckets).
const FIRST_GROUPS: usize = 56;

/// Bytes of the longest key image a group keeps inside itself.
const INLINE_KEY: usize = 30;

/// A group's key image: a short one (most keys of GROUP BY and DISTINCT tables) inside the
/// group, so that a new group allocates nothing of its own; a longer one in the arena.
#[derive(Debug)]
enum KeyImage {
    Inline { len: u8, bytes: [u8; INLINE_KEY] },
    Arena(AVec<u8, Arena>),
}

impl KeyImage {
    fn new(image: &[u8], arena: &Arena) -> Result<KeyImage> {
        if image.len() <= INLINE_KEY {
            let mut bytes = [0; INLINE_KEY];
            bytes[..image.len()].copy_from_slice(image);
            return Ok(KeyImage::Inline {
                len: image.len() as u8,
                bytes,
            });
        }
        let mut key = AVec::new_in(arena.clone());
        key.try_reserve_exact(image.len())?;
        key.extend_from_slice(image);
        Ok(KeyImage::Arena(key))
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            KeyImage::Inline { len, bytes } => &bytes[..usize::from(*len)],
            KeyImage::Arena(key) => key,
        }
    }
}

#[derive(Debug)]
struct Group {
    key: KeyImage,
    /// The oldest row with this key, then the others, oldest first: a key that only one row
    /// has (most keys of a GROUP BY or DISTINCT table) needs no list.
    first: Pos,
    more: Option<AVec<Pos, Arena>>,
}

impl Group {
    fn more(&self) -> &[Pos] {
        self.more.as_deref().unwrap_or_default()
    }

    fn len(&self) -> usize {
        1 + self.more().len()
    }

    /// Row `i`, oldest first.
    fn row(&self, i: usize) -> Option<Pos> {
        match i {
            0 => Some(self.first),
            i => self.more().get(i - 1).copied(),
        }
    }

    fn newest_first(&self) -> impl Iterator<Item = Pos> + '_ {
        self.more()
            .iter()
            .rev()
            .copied()
            .chain(std::iter::once(self.first))
    }

    /// Removes row `i` (oldest first); false when the group is left empty.
    fn remove(&mut self, i: usize) -> bool {
        match (i, &mut self.more) {
            (0, Some(more)) if !more.is_empty() => self.first = more.remove(0),
            (0, _) => return false,
            (i, Some(more)) if i <= more.len() => {
                more.remove(i - 1);
            }
            _ => {}
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
/// kept for statistics, and spreads some keys poorly. Images of up to 16 bytes (most keys of
/// temporary tables) are read as two words that may overlap, without copying them first.
fn hash_image(image: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mix = |h: u64, w: u64| (h.rotate_left(5) ^ w).wrapping_mul(K);
    let word = |b: &[u8]| u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
    let half = |b: &[u8]| u64::from(u32::from_le_bytes(b[..4].try_into().expect("4 bytes")));
    let n = image.len();
    let mut h = n as u64;
    let (a, b) = match n {
        0 => (0, 0),
        1..=3 => (
            u64::from(image[0]) << 16 | u64::from(image[n / 2]) << 8 | u64::from(image[n - 1]),
            0,
        ),
        4..=7 => (half(image), half(&image[n - 4..])),
        _ => {
            let mut words = image.chunks_exact(8);
            for w in &mut words {
                h = mix(h, word(w));
            }
            // The rest, as the last eight bytes (overlapping what came before).
            match words.remainder() {
                [] => (0, 0),
                _ => (word(&image[n - 8..]), 0),
            }
        }
    };
    h = mix(mix(h, a), b);
    h ^ (h >> 29)
}

fn rehash(g: &Group) -> u64 {
    hash_image(g.key.as_slice())
}

/// Whether a group is the one of key `image`.
fn keyed(image: &[u8]) -> impl Fn(&Group) -> bool + '_ {
    move |g| bytes_eq(g.key.as_slice(), image)
}

impl HashIndex {
    pub fn new(arena: &Arena) -> HashIndex {
        HashIndex {
            arena: arena.clone(),
            groups: HashTable::new_in(arena.clone()),
            entries: 0,
        }
    }

    #[inline(always)]
    fn group(&self, image: &[u8]) -> Option<&Group> {
        self.groups.find(hash_image(image), keyed(image))
    }

    /// Room for one more group. A temporary table's groups arrive one by one: the first
    /// reservation makes room for a few dozen, so that most tables never rehash.
    fn room_for_a_group(&mut self) -> Result<()> {
        let room = FIRST_GROUPS.saturating_sub(self.groups.capacity()).max(1);
        match self.groups.try_reserve(room, rehash) {
            Ok(()) => Ok(()),
            Err(e) => self.rebuild_in_place().ok_or(e.into()),
        }
    }

    /// Room for a group without a larger table, when one was refused (at the table's limit):
    /// removed groups leave tombstones that only a rehash frees, and a table more than half
    /// full rehashes into a new, larger array. Here the groups are moved out and back into the
    /// same array instead. The move-out takes a buffer of the groups (not the arena's; given
    /// back at once); None when it cannot be had or the array has no free bucket either.
    #[cold]
    fn rebuild_in_place(&mut self) -> Option<()> {
        let mut all = Vec::new();
        all.try_reserve_exact(self.groups.len()).ok()?;
        // Drained, the table keeps its array with every bucket empty, and holds them all again
        // without allocating.
        all.extend(self.groups.drain());
        for g in all {
            self.groups.insert_unique(rehash(&g), g, rehash);
        }
        (self.groups.len() < self.groups.capacity()).then(|| {
            // The refusal was answered here: no write finds the table full for it.
            crate::alloc::refusal::take();
        })
    }

    /// Whether some row has this key.
    #[inline]
    pub fn contains(&self, image: &[u8]) -> bool {
        self.group(image).is_some()
    }

    /// Adds `pos` under `image` as the newest row of its key. `absent`: the caller knows no
    /// row has this key (a unique key it checked), so there is no group to look for.
    pub fn insert(&mut self, image: &[u8], pos: Pos, absent: bool) -> Result<()> {
        let h = hash_image(image);
        // The key is copied only for a new group: rows with a key already there add no
        // allocation beyond their own entry.
        let existing = match absent {
            true => None,
            false => self.groups.find_mut(h, keyed(image)),
        };
        if let Some(g) = existing {
            let more = g
                .more
                .get_or_insert_with(|| AVec::new_in(self.arena.clone()));
            more.try_reserve(1)?;
            more.push(pos);
        } else {
            self.room_for_a_group()?;
            let group = Group {
                key: KeyImage::new(image, &self.arena)?,
                first: pos,
                more: None,
            };
            self.groups.insert_unique(h, group, rehash);
        }
        self.entries += 1;
        Ok(())
    }

    /// Adds the row `store` makes as the only row of key `image`, for a key that refuses
    /// duplicates, with one probe: `None` (and `store` is not called) when a row has the key.
    pub fn insert_unique_with(
        &mut self,
        image: &[u8],
        store: impl FnOnce() -> Result<Pos>,
    ) -> Result<Option<Pos>> {
        let h = hash_image(image);
        self.room_for_a_group()?;
        let Entry::Vacant(slot) = self.groups.entry(h, keyed(image), rehash) else {
            return Ok(None);
        };
        // The key is copied before the row is stored, so a failure leaves nothing behind.
        let key = KeyImage::new(image, &self.arena)?;
        let pos = store()?;
        slot.insert(Group {
            key,
            first: pos,
            more: None,
        });
        self.entries += 1;
        Ok(Some(pos))
    }

    /// Removes `pos` from under `image`; false if it was not there.
    pub fn remove(&mut self, image: &[u8], pos: Pos) -> bool {
        let Ok(mut entry) = self.groups.find_entry(hash_image(image), keyed(image)) else {
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

    /// Makes `pos` the newest row of key `image`, as taking it out and adding it again would,
    /// without allocating; false if it is not there.
    pub fn make_newest(&mut self, image: &[u8], pos: Pos) -> bool {
        let Some(g) = self.groups.find_mut(hash_image(image), keyed(image)) else {
            return false;
        };
        let Some(i) = (0..g.len()).find(|&i| g.row(i) == Some(pos)) else {
            return false;
        };
        let first = g.first;
        if let Some(more) = g.more.as_mut().filter(|m| !m.is_empty()) {
            if i == 0 {
                // [first, m0 .. mk] becomes [m0 .. mk, first].
                g.first = more[0];
                more.rotate_left(1);
                *more.last_mut().expect("not empty") = first;
            } else {
                more[i - 1..].rotate_left(1);
            }
        }
        true
    }

    /// The rows with key `image`, newest first.
    pub fn lookup(&self, image: &[u8]) -> impl Iterator<Item = Pos> + '_ {
        self.group(image).into_iter().flat_map(Group::newest_first)
    }

    /// The newest row with key `image` (the first [`lookup`](Self::lookup) returns).
    #[inline(always)]
    pub fn newest(&self, image: &[u8]) -> Option<Pos> {
        self.group(image)
            .map(|g| g.more().last().copied().unwrap_or(g.first))
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

    /// Drops every entry; the table keeps its room (in the arena) for the next ones.
    pub fn clear(&mut self) {
        self.groups.clear();
        self.entries = 0;
    }

    /// Entries in the index (one per row).
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// HEAP's `hash_buckets`: how many chains its linear hash has for these keys when the table
    /// holds `records` rows. `heap_hash` gives HEAP's hash of the key of a row.
    pub fn hash_buckets(
        &self,
        records: u64,
        mut heap_hash: impl FnMut(Pos) -> Result<u64>,
    ) -> Result<u64> {
        let blength = hp_blength(records);
        // Every chain's number, sorted: the distinct ones are the chains (memory for them is
        // asked for, and may be refused, before any is taken).
        let mut chains = Vec::new();
        chains.try_reserve_exact(self.groups.len())?;
        for g in self.groups.iter() {
            chains.push(hp_mask(heap_hash(g.first)?, blength, records));
        }
        chains.sort_unstable();
        chains.dedup();
        Ok(chains.len() as u64)
    }

    /// Checks the invariants; panics on a violation.
    pub fn debug_check_consistency(&self) {
        let mut seen = HashSet::new();
        let mut n = 0u64;
        for g in self.groups.iter() {
            assert_eq!(
                self.group(g.key.as_slice()).map(|f| f as *const Group),
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
    fn a_row_made_newest_comes_first() {
        let mut h = HashIndex::new(&Arena::new(16, 0, u64::MAX));
        for p in [4, 7, 9] {
            h.insert(b"k", p, false).unwrap();
        }
        assert_eq!(h.lookup(b"k").collect::<Vec<_>>(), [9, 7, 4]);
        assert!(h.make_newest(b"k", 4));
        assert_eq!(h.lookup(b"k").collect::<Vec<_>>(), [4, 9, 7]);
        assert!(h.make_newest(b"k", 9));
        assert_eq!(h.lookup(b"k").collect::<Vec<_>>(), [9, 4, 7]);
        assert!(h.make_newest(b"k", 9));
        assert_eq!(h.lookup(b"k").collect::<Vec<_>>(), [9, 4, 7]);
        assert!(!h.make_newest(b"k", 5));
        assert!(!h.make_newest(b"x", 9));
        h.debug_check_consistency();
    }

    #[test]
    fn at_its_limit_an_index_reuses_the_room_of_removed_keys() {
        use crate::alloc::Meter;
        let arena = Arena::try_new(16, 0, u64::MAX, Meter::try_new(256 << 10).unwrap()).unwrap();
        let mut h = HashIndex::new(&arena);
        let key = |i: u64| (i * 7919).to_le_bytes();
        let mut n = 0;
        while h.insert(&key(n), n, true).is_ok() {
            n += 1;
        }
        assert!(crate::alloc::refusal::take(), "refused by the limit");
        assert!(n > 500, "{n} keys");
        for i in 0..n / 4 {
            assert!(h.remove(&key(i), i));
        }
        // A larger array would pass the limit: the same one holds the new keys.
        for i in n..n + n / 4 {
            h.insert(&key(i), i, true).unwrap();
        }
        assert!(!crate::alloc::refusal::take());
        assert_eq!(h.entries(), n);
        for i in n / 4..n + n / 4 {
            assert_eq!(h.newest(&key(i)), Some(i));
        }
        h.debug_check_consistency();
    }

    #[test]
    fn equal_keys_come_newest_first_and_keep_order_after_deletes() {
        let mut h = HashIndex::new(&Arena::new(16, 0, u64::MAX));
        for p in 0..4 {
            h.insert(b"k", p, false).unwrap();
        }
        h.insert(b"j", 9, true).unwrap();
        assert_eq!(h.lookup(b"k").collect::<Vec<_>>(), [3, 2, 1, 0]);
        assert_eq!(
            (h.newest(b"k"), h.newest(b"j"), h.newest(b"x")),
            (Some(3), Some(9), None)
        );
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
    fn the_hash_reads_every_byte() {
        // Every length up to a few words: changing any one byte changes the hash, so no byte
        // is left unread (short images are read as overlapping words).
        for n in 0..40usize {
            let image: Vec<u8> = (0..n as u8).map(|i| i.wrapping_mul(37)).collect();
            let h = hash_image(&image);
            for i in 0..n {
                let mut other = image.clone();
                other[i] ^= 0x10;
                assert_ne!(hash_image(&other), h, "length {n}, byte {i}");
            }
            let mut longer = image.clone();
            longer.push(0);
            assert_ne!(hash_image(&longer), h, "length {n} and a zero byte more");
        }
    }

    #[test]
    fn buckets_count_distinct_chain_positions() {
        let mut h = HashIndex::new(&Arena::new(16, 0, u64::MAX));
        // Hashes 1 and 5 share position 1 of a 4-row table (blength 8, 5 & 7 = 5 >= 4 -> 1).
        h.insert(b"a", 0, true).unwrap();
        h.insert(b"b", 1, true).unwrap();
        h.insert(b"c", 2, true).unwrap();
        h.insert(b"c", 3, false).unwrap();
        let heap_hash = |p: Pos| Ok([1, 5, 2, 2][p as usize]);
        assert_eq!(h.hash_buckets(4, heap_hash).unwrap(), 2);
        h.clear();
        assert_eq!(h.hash_buckets(0, heap_hash).unwrap(), 0);
    }
}
