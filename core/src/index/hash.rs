//! HASH indexes: rows grouped by key, in HEAP's order, in a few bytes per row.
//!
//! HEAP keeps a hash index as a linear hash whose chains put a new entry first and keep the
//! relative order of the others through splits, merges and deletes. Rows with equal keys (under
//! the collation) always share a chain, so a lookup returns them newest first: that is the order
//! rheap keeps per key. The statistics HEAP derives from its chain count (`hash_buckets`) come
//! out the same: they are computed from HEAP's hash of each key, taken from a row of the key
//! when the statistics are asked for.
//!
//! The layout, like HEAP's, keeps no key: a key is compared with the key of a stored row
//! ([`Keys`]). One slot per key (a *group*) in an open-addressed array, probed linearly:
//!
//! ```text
//! slot:   | row: u32 (the group's newest row) | tag: 31 bits of the key's hash, 1 bit "more" |
//! older:  row position -> the next older row of its key (u32), for keys with more than one row
//! ```
//!
//! Eight bytes a slot, the array at most three quarters full (seven eighths when the table's
//! limit refuses a larger one), and four bytes a row for rows that share a key: below HEAP's
//! 24 bytes a row (its `HASH_INFO`). A removed group's slot is filled by shifting the slots
//! after it back, so no tombstone is ever left. Both arrays are [`ChunkVec`]s: no piece
//! passes the block size.

use super::rows::{Keys, MAX_POS};
use crate::alloc::chunks::{ChunkVec, GrowingVec};
use crate::alloc::Arena;
use crate::error::{Error, Result};
use crate::key::{hp_blength, hp_mask};
use crate::rows::records::Pos;
use std::collections::HashSet;

/// "No row": a free slot's row, the end of a list of older rows.
const NONE: u32 = u32::MAX;
/// The tag's bit for a group with more than one row.
const MORE: u32 = 1 << 31;

/// log2 of the slots of a new index.
const FIRST_BITS: u32 = 6;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot {
    row: u32,
    tag: u32,
}

impl Slot {
    const FREE: Slot = Slot { row: NONE, tag: 0 };

    fn is_free(self) -> bool {
        self.row == NONE
    }

    fn hash(self) -> u32 {
        self.tag & !MORE
    }

    fn more(self) -> bool {
        self.tag & MORE != 0
    }
}

/// A free slot where a key not in the index goes, found by [`HashIndex::vacancy`].
#[derive(Debug, Clone, Copy)]
pub struct Vacancy {
    slot: usize,
    hash: u32,
}

/// Where a probe for a key ends.
enum Probe {
    Found(usize),
    Vacant(usize),
}

#[derive(Debug)]
pub struct HashIndex {
    arena: Arena,
    slots: ChunkVec<Slot>,
    /// log2 of the slots (0 while there are none).
    bits: u32,
    /// Slots in use: one per key.
    groups: usize,
    /// For each row of a group with more than one row (by position), the next older row of
    /// its key, or NONE after the oldest.
    older: GrowingVec<u32>,
    /// Positions of rows are this far apart at least: the list of older rows has an entry
    /// for every `stride`-th position (a [`crate::rows::log::RowLog`]'s positions are offsets).
    stride: u32,
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

/// The 31 bits of a key's hash a slot keeps: the top ones, the best mixed.
#[inline(always)]
fn tag_of(image: &[u8]) -> u32 {
    (hash_image(image) >> 33) as u32
}

/// A position as an index keeps it; `TableFull` past [`MAX_POS`].
fn row_id(pos: Pos) -> Result<u32> {
    match pos <= MAX_POS {
        true => Ok(pos as u32),
        false => Err(Error::TableFull),
    }
}

impl HashIndex {
    pub fn new(arena: &Arena) -> HashIndex {
        HashIndex::with_stride(arena, 1)
    }

    /// An index of rows whose positions are `stride` apart at least.
    pub fn with_stride(arena: &Arena, stride: u32) -> HashIndex {
        HashIndex {
            arena: arena.clone(),
            slots: ChunkVec::new(arena),
            bits: 0,
            groups: 0,
            older: GrowingVec::new(arena),
            stride: stride.max(1),
            entries: 0,
        }
    }

    /// The entry of row `id` in the list of older rows.
    #[inline(always)]
    fn older_at(&self, id: u32) -> usize {
        (id / self.stride) as usize
    }

    fn mask(&self) -> usize {
        self.slots.len().wrapping_sub(1)
    }

    /// The first slot a key of hash `h` may be in (Fibonacci hashing over the slots).
    #[inline(always)]
    fn home(&self, h: u32) -> usize {
        (u64::from(h).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.bits)) as usize
    }

    /// Probes for key `image` of hash `h`: its group's slot, or the free slot that ends the
    /// probe. The index must have slots.
    #[inline]
    fn probe(&self, image: &[u8], h: u32, rows: &impl Keys) -> Result<Probe> {
        let mask = self.mask();
        let mut i = self.home(h);
        loop {
            let s = self.slots.get(i);
            if s.is_free() {
                return Ok(Probe::Vacant(i));
            }
            if s.hash() == h && rows.has_key(Pos::from(s.row), image)? {
                return Ok(Probe::Found(i));
            }
            i = (i + 1) & mask;
        }
    }

    /// The slot of key `image`'s group.
    #[inline]
    fn group(&self, image: &[u8], rows: &impl Keys) -> Result<Option<usize>> {
        if self.groups == 0 {
            return Ok(None);
        }
        Ok(match self.probe(image, tag_of(image), rows)? {
            Probe::Found(i) => Some(i),
            Probe::Vacant(_) => None,
        })
    }

    /// The slot of the group that holds row `pos`, found from the key's hash `h` (no key is
    /// compared), and the row before it in the group (None: it is the newest).
    fn group_of_row(&self, h: u32, pos: u32) -> Option<(usize, Option<u32>)> {
        if self.groups == 0 {
            return None;
        }
        let mask = self.mask();
        let mut i = self.home(h);
        loop {
            let s = self.slots.get(i);
            if s.is_free() {
                return None;
            }
            if s.hash() == h {
                if s.row == pos {
                    return Some((i, None));
                }
                let mut prev = s.row;
                let mut next = match s.more() {
                    true => self.older.get(self.older_at(prev)),
                    false => NONE,
                };
                while next != NONE {
                    if next == pos {
                        return Some((i, Some(prev)));
                    }
                    prev = next;
                    next = self.older.get(self.older_at(prev));
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// Room for one more group: the slots are at most three quarters full. When a larger array
    /// is refused (the table's limit), up to seven eighths of this one is used instead.
    fn room_for_a_group(&mut self) -> Result<()> {
        let cap = self.slots.len();
        if (self.groups + 1) * 4 <= cap * 3 {
            return Ok(());
        }
        let bits = match self.bits {
            0 => FIRST_BITS,
            b if b < 31 => b + 1,
            _ => return Err(Error::TableFull),
        };
        match self.grow(bits) {
            Ok(()) => Ok(()),
            Err(_) if (self.groups + 1) * 8 <= cap * 7 => {
                // The refusal was answered here: no write finds the table full for it.
                crate::alloc::refusal::take();
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Moves the groups to a new array of `1 << bits` slots; on `OutOfMemory` nothing changed.
    fn grow(&mut self, bits: u32) -> Result<()> {
        let new = ChunkVec::try_filled(1 << bits, Slot::FREE, &self.arena)?;
        let old = std::mem::replace(&mut self.slots, new);
        self.bits = bits;
        for s in old.iter().filter(|s| !s.is_free()) {
            let i = self.first_free(s.hash());
            self.slots.set(i, s);
        }
        Ok(())
    }

    /// The first free slot on the probe of hash `h`: where a new group of it goes.
    fn first_free(&self, h: u32) -> usize {
        let mask = self.mask();
        let mut i = self.home(h);
        while !self.slots.get(i).is_free() {
            i = (i + 1) & mask;
        }
        i
    }

    /// Frees slot `i`, shifting back the slots after it that may move closer to their home,
    /// so that every group stays reachable from its home and no tombstone is left.
    fn free_slot(&mut self, i: usize) {
        let mask = self.mask();
        let (mut hole, mut j) = (i, i);
        loop {
            j = (j + 1) & mask;
            let s = self.slots.get(j);
            if s.is_free() {
                break;
            }
            // It may fill the hole when its home is not after the hole (cyclically).
            let home = self.home(s.hash());
            if j.wrapping_sub(home) & mask >= j.wrapping_sub(hole) & mask {
                self.slots.set(hole, s);
                hole = j;
            }
        }
        self.slots.set(hole, Slot::FREE);
        self.groups -= 1;
    }

    /// Room in the list of older rows for rows `a` and `b`.
    fn older_room(&mut self, a: u32, b: u32) -> Result<()> {
        let want = self.older_at(a.max(b)) + 1;
        while self.older.len() < want {
            self.older.try_grow(64, NONE)?;
        }
        Ok(())
    }

    /// Makes `pos` the newest row of the group in slot `i`; the list of older rows has room
    /// for it and the group's newest row.
    fn push_newest(&mut self, i: usize, pos: u32) {
        let mut s = self.slots.get(i);
        if !s.more() {
            self.older.set(self.older_at(s.row), NONE);
        }
        self.older.set(self.older_at(pos), s.row);
        s.row = pos;
        s.tag |= MORE;
        self.slots.set(i, s);
    }

    /// Whether some row has key `image`.
    #[inline]
    pub fn contains(&self, image: &[u8], rows: &impl Keys) -> Result<bool> {
        Ok(self.group(image, rows)?.is_some())
    }

    /// Adds `pos` under `image` as the newest row of its key. `absent`: the caller knows no
    /// row has this key (a unique key it checked), so there is no group to look for.
    pub fn insert(&mut self, image: &[u8], pos: Pos, absent: bool, rows: &impl Keys) -> Result<()> {
        let id = row_id(pos)?;
        let h = tag_of(image);
        // Where the probe for the key ended, when it was made (it stays right unless the
        // slots move to a larger array).
        let mut vacant = None;
        if !absent && self.groups > 0 {
            match self.probe(image, h, rows)? {
                Probe::Found(i) => {
                    self.older_room(id, self.slots.get(i).row)?;
                    self.push_newest(i, id);
                    self.entries += 1;
                    return Ok(());
                }
                Probe::Vacant(i) => vacant = Some(i),
            }
        }
        let bits = self.bits;
        self.room_for_a_group()?;
        let slot = match vacant {
            Some(i) if self.bits == bits => i,
            _ => self.first_free(h),
        };
        self.fill(Vacancy { slot, hash: h }, id);
        Ok(())
    }

    /// Where key `image` goes when no row has it, with one probe: None when a row has it.
    /// Nothing may change the index before the vacancy is [`fill`](Self::fill)ed.
    pub fn vacancy(&mut self, image: &[u8], rows: &impl Keys) -> Result<Option<Vacancy>> {
        let h = tag_of(image);
        self.room_for_a_group()?;
        Ok(match self.probe(image, h, rows)? {
            Probe::Found(_) => None,
            Probe::Vacant(slot) => Some(Vacancy { slot, hash: h }),
        })
    }

    /// Puts row `pos`, the first of its key, in vacancy `v` (see [`vacancy`](Self::vacancy));
    /// `TableFull` for a position past [`MAX_POS`].
    pub fn fill_vacancy(&mut self, v: Vacancy, pos: Pos) -> Result<()> {
        let id = row_id(pos)?;
        self.fill(v, id);
        Ok(())
    }

    fn fill(&mut self, v: Vacancy, id: u32) {
        debug_assert!(self.slots.get(v.slot).is_free(), "a vacancy is free");
        self.slots.set(
            v.slot,
            Slot {
                row: id,
                tag: v.hash,
            },
        );
        self.groups += 1;
        self.entries += 1;
    }

    /// Removes `pos` from under `image`; false if it was not there. Allocates nothing.
    pub fn remove(&mut self, image: &[u8], pos: Pos) -> bool {
        let Ok(id) = row_id(pos) else {
            return false;
        };
        let Some((i, prev)) = self.group_of_row(tag_of(image), id) else {
            return false;
        };
        let mut s = self.slots.get(i);
        let next = match s.more() {
            true => self.older.get(self.older_at(id)),
            false => NONE,
        };
        match prev {
            None if next == NONE => self.free_slot(i),
            None => {
                s.row = next;
                if self.older.get(self.older_at(next)) == NONE {
                    s.tag &= !MORE;
                }
                self.slots.set(i, s);
            }
            Some(prev) => {
                self.older.set(self.older_at(prev), next);
                if prev == s.row && next == NONE {
                    s.tag &= !MORE;
                    self.slots.set(i, s);
                }
            }
        }
        self.entries -= 1;
        true
    }

    /// Makes `pos` the newest row of key `image`, as taking it out and adding it again would,
    /// without allocating; false if it is not there.
    pub fn make_newest(&mut self, image: &[u8], pos: Pos) -> bool {
        let Ok(id) = row_id(pos) else {
            return false;
        };
        let Some((i, prev)) = self.group_of_row(tag_of(image), id) else {
            return false;
        };
        if let Some(prev) = prev {
            // Out of its place in the list (which has room for it), then first.
            self.older
                .set(self.older_at(prev), self.older.get(self.older_at(id)));
            let mut s = self.slots.get(i);
            self.older.set(self.older_at(id), s.row);
            s.row = id;
            self.slots.set(i, s);
        }
        true
    }

    /// The rows of the group in slot `i`, newest first.
    fn rows_of(&self, i: Option<usize>) -> RowsOfKey<'_> {
        let (next, more) = match i.map(|i| self.slots.get(i)) {
            Some(s) => (s.row, s.more()),
            None => (NONE, false),
        };
        RowsOfKey {
            index: self,
            next,
            more,
        }
    }

    /// The rows with key `image`, newest first.
    pub fn lookup(&self, image: &[u8], rows: &impl Keys) -> Result<RowsOfKey<'_>> {
        Ok(self.rows_of(self.group(image, rows)?))
    }

    /// The newest row with key `image` (the first [`lookup`](Self::lookup) returns).
    #[inline(always)]
    pub fn newest(&self, image: &[u8], rows: &impl Keys) -> Result<Option<Pos>> {
        Ok(self
            .group(image, rows)?
            .map(|i| Pos::from(self.slots.get(i).row)))
    }

    /// The row after (`forward`) or before `pos` among the rows with key `image` (newest
    /// first), and how many rows come before it; None past either end. When `pos` is no longer
    /// there (deleted mid-scan), `at` (how many rows came before it) says where it was: the row
    /// after it is the one now at `at`.
    pub fn step_from(
        &self,
        image: &[u8],
        (pos, at): (Pos, usize),
        forward: bool,
        rows: &impl Keys,
    ) -> Result<Option<(Pos, usize)>> {
        let group = self.group(image, rows)?;
        let i = match (self.rows_of(group).position(|p| p == pos), forward) {
            (Some(i), true) => Some(i + 1),
            (None, true) => Some(at),
            (found, false) => found.unwrap_or(at).checked_sub(1),
        };
        Ok(i.and_then(|i| self.rows_of(group).nth(i).map(|p| (p, i))))
    }

    /// The newest (`newest`) or the oldest row with key `image`, and how many rows come
    /// before it.
    pub fn end_of(
        &self,
        image: &[u8],
        newest: bool,
        rows: &impl Keys,
    ) -> Result<Option<(Pos, usize)>> {
        let mut all = self.rows_of(self.group(image, rows)?).enumerate();
        Ok(if newest { all.next() } else { all.last() }.map(|(i, p)| (p, i)))
    }

    /// Drops every entry; the index keeps its arrays (in the arena) for the next ones.
    pub fn clear(&mut self) {
        self.slots.fill(Slot::FREE);
        self.groups = 0;
        self.entries = 0;
    }

    /// Entries in the index (one per row).
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// The newest row of each key.
    fn newest_rows(&self) -> impl Iterator<Item = Pos> + '_ {
        self.slots
            .iter()
            .filter(|s| !s.is_free())
            .map(|s| Pos::from(s.row))
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
        chains.try_reserve_exact(self.groups)?;
        for p in self.newest_rows() {
            chains.push(hp_mask(heap_hash(p)?, blength, records));
        }
        chains.sort_unstable();
        chains.dedup();
        Ok(chains.len() as u64)
    }

    /// Checks the invariants; panics on a violation. (That each row is found under its own
    /// key the table checks, with its rows.)
    pub fn debug_check_consistency(&self) {
        self.slots.debug_check_consistency();
        self.older.debug_check_consistency();
        let mut seen = HashSet::new();
        let (mut groups, mut n) = (0, 0u64);
        let mask = self.mask();
        for (j, s) in self.slots.iter().enumerate() {
            if s.is_free() {
                continue;
            }
            groups += 1;
            let mut i = self.home(s.hash());
            while i != j {
                assert!(
                    !self.slots.get(i).is_free(),
                    "slot {j} is reachable from its home"
                );
                i = (i + 1) & mask;
            }
            let rows: Vec<Pos> = self.rows_of(Some(j)).collect();
            assert_eq!(s.more(), rows.len() > 1, "slot {j}: the more bit");
            for p in rows {
                assert!(seen.insert(p), "row {p} is in the index once");
                n += 1;
            }
        }
        assert_eq!(groups, self.groups, "group count");
        assert_eq!(n, self.entries, "entry count");
        assert!(
            self.slots.is_empty() || self.groups < self.slots.len(),
            "a free slot ends every probe"
        );
    }
}

/// The rows of one key, newest first (see [`HashIndex::lookup`]).
#[derive(Debug)]
pub struct RowsOfKey<'a> {
    index: &'a HashIndex,
    next: u32,
    more: bool,
}

impl Iterator for RowsOfKey<'_> {
    type Item = Pos;

    fn next(&mut self) -> Option<Pos> {
        if self.next == NONE {
            return None;
        }
        let p = self.next;
        self.next = match self.more {
            true => self.index.older.get(self.index.older_at(p)),
            false => NONE,
        };
        Some(Pos::from(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    use crate::index::rows::Images as Rows;

    impl Rows {
        fn put(&self, h: &mut HashIndex, image: &[u8], pos: Pos, absent: bool) -> Result<()> {
            self.set(pos, image);
            h.insert(image, pos, absent, self)
        }

        fn lookup(&self, h: &HashIndex, image: &[u8]) -> Vec<Pos> {
            h.lookup(image, self).unwrap().collect()
        }
    }

    fn arena() -> Arena {
        Arena::new(16, 0, u64::MAX)
    }

    #[test]
    fn a_row_made_newest_comes_first() {
        let (mut h, rows) = (HashIndex::new(&arena()), Rows::default());
        for p in [4, 7, 9] {
            rows.put(&mut h, b"k", p, false).unwrap();
        }
        assert_eq!(rows.lookup(&h, b"k"), [9, 7, 4]);
        assert!(h.make_newest(b"k", 4));
        assert_eq!(rows.lookup(&h, b"k"), [4, 9, 7]);
        assert!(h.make_newest(b"k", 9));
        assert_eq!(rows.lookup(&h, b"k"), [9, 4, 7]);
        assert!(h.make_newest(b"k", 9));
        assert_eq!(rows.lookup(&h, b"k"), [9, 4, 7]);
        assert!(!h.make_newest(b"k", 5));
        assert!(!h.make_newest(b"x", 9));
        h.debug_check_consistency();
    }

    #[test]
    fn at_its_limit_an_index_uses_the_room_of_removed_keys() {
        use crate::alloc::Meter;
        // Smaller under Miri, where each key takes milliseconds.
        let limit = crate::testing::miri_or(256 << 10, 32 << 10) as u64;
        let arena = Arena::try_new(16, 0, u64::MAX, Meter::try_new(limit).unwrap()).unwrap();
        let (mut h, rows) = (HashIndex::new(&arena), Rows::default());
        let key = |i: u64| (i * 7919).to_le_bytes();
        let mut n = 0;
        while rows.put(&mut h, &key(n), n, true).is_ok() {
            n += 1;
        }
        assert!(crate::alloc::refusal::take(), "refused by the limit");
        assert!(n > crate::testing::miri_or(5_000, 500) as u64, "{n} keys");
        for i in 0..n / 4 {
            assert!(h.remove(&key(i), i));
        }
        // A larger array would pass the limit: the same one holds the new keys.
        for i in n..n + n / 4 {
            rows.put(&mut h, &key(i), i, true).unwrap();
        }
        assert!(!crate::alloc::refusal::take());
        assert_eq!(h.entries(), n);
        for i in n / 4..n + n / 4 {
            assert_eq!(h.newest(&key(i), &rows).unwrap(), Some(i));
        }
        h.debug_check_consistency();
    }

    #[test]
    fn equal_keys_come_newest_first_and_keep_order_after_deletes() {
        let (mut h, rows) = (HashIndex::new(&arena()), Rows::default());
        for p in 0..4 {
            rows.put(&mut h, b"k", p, false).unwrap();
        }
        rows.put(&mut h, b"j", 9, true).unwrap();
        assert_eq!(rows.lookup(&h, b"k"), [3, 2, 1, 0]);
        let newest = |k: &[u8]| h.newest(k, &rows).unwrap();
        assert_eq!(
            (newest(b"k"), newest(b"j"), newest(b"x")),
            (Some(3), Some(9), None)
        );
        assert!(h.remove(b"k", 2));
        assert!(!h.remove(b"k", 2));
        assert_eq!(rows.lookup(&h, b"k"), [3, 1, 0]);
        // Row 2 was deleted while a scan stood on it, after one row (3) had been read.
        let next = |p, at| h.step_from(b"k", (p, at), true, &rows).unwrap();
        assert_eq!(next(2, 1), Some((1, 1)));
        assert_eq!(next(1, 1), Some((0, 2)));
        assert_eq!(next(0, 2), None);
        h.debug_check_consistency();
        assert_eq!(h.entries(), 4);
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "a million keys take hours under Miri; the other tests walk the same code"
    )]
    fn a_million_int_keys_take_under_heaps_24_bytes_a_row() {
        let arena = arena();
        let (mut h, rows) = (HashIndex::new(&arena), Rows::default());
        for p in 0..1_000_000u64 {
            let key = (p as u32).to_be_bytes();
            rows.set(p, &key);
            h.insert(&key, p, true, &rows).unwrap();
        }
        assert!(arena.bytes() < 24 * 1_000_000, "{} bytes", arena.bytes());
        assert_eq!(h.newest(&77u32.to_be_bytes(), &rows).unwrap(), Some(77));
        h.debug_check_consistency();
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
        let (mut h, rows) = (HashIndex::new(&arena()), Rows::default());
        // Hashes 1 and 5 share position 1 of a 4-row table (blength 8, 5 & 7 = 5 >= 4 -> 1).
        rows.put(&mut h, b"a", 0, true).unwrap();
        rows.put(&mut h, b"b", 1, true).unwrap();
        rows.put(&mut h, b"c", 2, true).unwrap();
        rows.put(&mut h, b"c", 3, false).unwrap();
        let heap_hash = |p: Pos| Ok([1, 5, 2, 2][p as usize]);
        assert_eq!(h.hash_buckets(4, heap_hash).unwrap(), 2);
        h.clear();
        assert_eq!(h.hash_buckets(0, heap_hash).unwrap(), 0);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u8),
        Remove(usize),
        MakeNewest(usize),
        Clear,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            8 => any::<u8>().prop_map(Op::Insert),
            5 => any::<usize>().prop_map(Op::Remove),
            2 => any::<usize>().prop_map(Op::MakeNewest),
            1 => Just(Op::Clear),
        ]
    }

    proptest! {

        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::testing::cases(256)))]
        /// Against a model: a vector of (key, row) pairs, oldest first. Few distinct keys
        /// (equal keys share groups) whose images collide in their low bits often.
        #[test]
        fn behaves_as_a_list_of_rows_per_key(ops in prop::collection::vec(op(), 1..400)) {
            let (mut h, rows) = (HashIndex::new(&arena()), Rows::default());
            let mut model: Vec<(u8, Pos)> = Vec::new();
            let mut next_pos = 0;
            let image = |k: u8| vec![k % 37, 0, 0, 1];
            for op in ops {
                match op {
                    Op::Insert(k) => {
                        rows.put(&mut h, &image(k), next_pos, false).unwrap();
                        model.push((k % 37, next_pos));
                        next_pos += 1;
                    }
                    Op::Remove(i) if !model.is_empty() => {
                        let (k, p) = model.remove(i % model.len());
                        prop_assert!(h.remove(&image(k), p));
                        prop_assert!(!h.remove(&image(k), p));
                    }
                    Op::MakeNewest(i) if !model.is_empty() => {
                        let e = model.remove(i % model.len());
                        prop_assert!(h.make_newest(&image(e.0), e.1));
                        model.push(e);
                    }
                    Op::Clear => {
                        h.clear();
                        model.clear();
                    }
                    _ => {}
                }
                h.debug_check_consistency();
                prop_assert_eq!(h.entries(), model.len() as u64);
            }
            for k in 0..37u8 {
                let want: Vec<Pos> =
                    model.iter().rev().filter(|e| e.0 == k).map(|e| e.1).collect();
                prop_assert_eq!(rows.lookup(&h, &image(k)), want.clone());
                prop_assert_eq!(h.contains(&image(k), &rows).unwrap(), !want.is_empty());
            }
        }
    }
}
