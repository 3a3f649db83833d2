//! BTREE indexes: rows ordered by key image, then by position, in a tree shaped as HEAP's.
//!
//! Images of one index all have the same length, and the image of a key prefix is a prefix of
//! the whole image, so a search for a partial key compares only the prefix's bytes. Rows with
//! equal keys are ordered by position (HEAP orders them by the address of the row, which no
//! result can rely on).

use super::rbtree::RbTree;
use crate::alloc::Arena;
use crate::error::Result;
use crate::records::Pos;
use allocator_api2::vec::Vec as AVec;
use std::cmp::Ordering;

/// An entry as the index hands it out: the key image and the row.
pub type EntryRef<'a> = (&'a [u8], Pos);

/// An entry kept outside the index: where a scan stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Entry {
    pub image: Vec<u8>,
    pub pos: Pos,
}

impl Entry {
    pub fn new(e: EntryRef<'_>) -> Result<Entry> {
        let mut entry = Entry {
            image: Vec::new(),
            pos: e.1,
        };
        entry.set(e)?;
        Ok(entry)
    }

    /// Moves to `e`, reusing the image's buffer.
    pub fn set(&mut self, e: EntryRef<'_>) -> Result<()> {
        self.image.clear();
        self.image.try_reserve(e.0.len())?;
        self.image.extend_from_slice(e.0);
        self.pos = e.1;
        Ok(())
    }

    pub fn as_ref(&self) -> EntryRef<'_> {
        (&self.image, self.pos)
    }
}

/// An entry in the tree, in the table's arena.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Stored {
    image: AVec<u8, Arena>,
    pos: Pos,
}

impl Stored {
    fn as_ref(&self) -> EntryRef<'_> {
        (&self.image, self.pos)
    }
}

#[derive(Debug)]
pub struct BtreeIndex {
    arena: Arena,
    tree: RbTree<Stored, Arena>,
    image_len: usize,
}

/// Where a search lands relative to a key (HEAP's `ha_rkey_function`, the ones it supports).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Find {
    /// First row whose key starts with the given prefix.
    Exact,
    /// First row at or after the key.
    KeyOrNext,
    /// The first row with the key, else the last row before it.
    KeyOrPrev,
    /// First row after the key.
    AfterKey,
    /// Last row before the key.
    BeforeKey,
    /// Last row whose key starts with the prefix.
    PrefixLast,
    /// Last row at or before the key (prefix included).
    PrefixLastOrPrev,
}

/// One end of a range for [`BtreeIndex::records_in_range`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeEnd<'a> {
    /// Rows with this key prefix are inside the range.
    Including(&'a [u8]),
    /// Rows with this key prefix are outside.
    Excluding(&'a [u8]),
}

/// How an entry's key compares with a key prefix (only the prefix's bytes count).
fn cmp_prefix(e: &Stored, prefix: &[u8]) -> Ordering {
    e.image[..prefix.len().min(e.image.len())].cmp(prefix)
}

impl BtreeIndex {
    pub fn new(image_len: usize, arena: &Arena) -> BtreeIndex {
        BtreeIndex {
            arena: arena.clone(),
            tree: RbTree::new_in(arena.clone()),
            image_len,
        }
    }

    /// Whether some row's key equals `image` (a whole key).
    pub fn contains(&self, image: &[u8]) -> bool {
        self.find(image, Find::Exact).is_some()
    }

    /// Whether row `pos` is in the index under `image`.
    pub fn contains_entry(&self, image: &[u8], pos: Pos) -> bool {
        self.tree.contains_by(|s| s.as_ref().cmp(&(image, pos)))
    }

    pub fn insert(&mut self, image: &[u8], pos: Pos) -> Result<()> {
        debug_assert_eq!(image.len(), self.image_len);
        let mut stored = AVec::new_in(self.arena.clone());
        stored.try_reserve_exact(image.len())?;
        stored.extend_from_slice(image);
        self.tree.try_insert(Stored { image: stored, pos })?;
        Ok(())
    }

    pub fn remove(&mut self, image: &[u8], pos: Pos) -> bool {
        self.tree.remove_by(|s| s.as_ref().cmp(&(image, pos)))
    }

    /// The first entry whose key is at or after (`or_equal`) / after `prefix`.
    fn first_from(&self, prefix: &[u8], or_equal: bool) -> Option<EntryRef<'_>> {
        self.tree
            .first_where(|e| match cmp_prefix(e, prefix) {
                Ordering::Equal => or_equal,
                o => o == Ordering::Greater,
            })
            .map(Stored::as_ref)
    }

    /// The last entry whose key is at or before (`or_equal`) / before `prefix`.
    fn last_to(&self, prefix: &[u8], or_equal: bool) -> Option<EntryRef<'_>> {
        self.tree
            .last_where(|e| match cmp_prefix(e, prefix) {
                Ordering::Equal => or_equal,
                o => o == Ordering::Less,
            })
            .map(Stored::as_ref)
    }

    /// The row a search for `prefix` lands on.
    pub fn find(&self, prefix: &[u8], how: Find) -> Option<EntryRef<'_>> {
        let starts = |e: &EntryRef<'_>| e.0.starts_with(prefix);
        match how {
            Find::Exact => self.first_from(prefix, true).filter(starts),
            Find::KeyOrNext => self.first_from(prefix, true),
            Find::AfterKey => self.first_from(prefix, false),
            // HEAP's tree search moves left on an equal key for this flag as for Exact, so it
            // lands on the first entry equal to the key, and only without one on the last
            // before it.
            Find::KeyOrPrev => self
                .first_from(prefix, true)
                .filter(starts)
                .or_else(|| self.last_to(prefix, false)),
            Find::PrefixLastOrPrev => self.last_to(prefix, true),
            Find::BeforeKey => self.last_to(prefix, false),
            Find::PrefixLast => self.last_to(prefix, true).filter(starts),
        }
    }

    pub fn first(&self) -> Option<EntryRef<'_>> {
        self.tree.first_where(|_| true).map(Stored::as_ref)
    }

    pub fn last(&self) -> Option<EntryRef<'_>> {
        self.tree.last_where(|_| true).map(Stored::as_ref)
    }

    /// The entry after `e` (which may have been removed since).
    pub fn next(&self, e: EntryRef<'_>) -> Option<EntryRef<'_>> {
        self.tree
            .first_where(|x| x.as_ref() > e)
            .map(Stored::as_ref)
    }

    /// The entry before `e` (which may have been removed since).
    pub fn prev(&self, e: EntryRef<'_>) -> Option<EntryRef<'_>> {
        self.tree.last_where(|x| x.as_ref() < e).map(Stored::as_ref)
    }

    /// MEMORY's estimate of the rows between two ends (None: from the start / to the end),
    /// read off the tree's shape as HEAP reads it (`hp_rb_records_in_range`): never 0 unless
    /// the ends cross.
    pub fn records_in_range(&self, min: Option<RangeEnd<'_>>, max: Option<RangeEnd<'_>>) -> u64 {
        let pos = |end: RangeEnd<'_>, is_min: bool| {
            let (p, after) = match end {
                RangeEnd::Including(p) => (p, !is_min),
                RangeEnd::Excluding(p) => (p, is_min),
            };
            self.tree.record_pos(|e| cmp_prefix(e, p), after)
        };
        let start = min.map_or(0, |m| pos(m, true));
        let end = max.map_or(self.tree.len() as u64 + 1, |m| pos(m, false));
        match end.cmp(&start) {
            Ordering::Less => 0,
            Ordering::Equal => 1,
            Ordering::Greater => end - start,
        }
    }

    pub fn entries(&self) -> u64 {
        self.tree.len() as u64
    }

    pub fn clear(&mut self) {
        self.tree.clear();
    }

    /// Checks the invariants; panics on a violation.
    pub fn debug_check_consistency(&self) {
        self.tree.debug_check_consistency();
        let mut seen = std::collections::HashSet::new();
        for Stored { image: img, pos } in self.tree.iter() {
            assert_eq!(
                img.len(),
                self.image_len,
                "every image has the index's length"
            );
            assert!(seen.insert(*pos), "row {pos} is in the index once");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(keys: &[(&[u8; 2], Pos)]) -> BtreeIndex {
        let mut t = BtreeIndex::new(2, &Arena::new(16, 0, u64::MAX));
        for (k, p) in keys {
            t.insert(&k[..], *p).unwrap();
        }
        t
    }

    #[test]
    fn searches_land_where_heap_lands() {
        let t = index(&[(b"a1", 0), (b"a2", 1), (b"b1", 2), (b"b1", 3), (b"c0", 4)]);
        let pos = |p: &[u8], how| t.find(p, how).map(|e| e.1);
        assert_eq!(pos(b"b1", Find::Exact), Some(2));
        assert_eq!(pos(b"b", Find::Exact), Some(2));
        assert_eq!(pos(b"b2", Find::Exact), None);
        assert_eq!(pos(b"b2", Find::KeyOrNext), Some(4));
        assert_eq!(pos(b"b", Find::AfterKey), Some(4));
        assert_eq!(pos(b"b", Find::BeforeKey), Some(1));
        assert_eq!(pos(b"b", Find::PrefixLast), Some(3));
        assert_eq!(pos(b"a9", Find::PrefixLastOrPrev), Some(1));
        assert_eq!(pos(b"a0", Find::KeyOrPrev), None);
        assert_eq!(pos(b"b1", Find::KeyOrPrev), Some(2));
        assert_eq!(pos(b"b2", Find::KeyOrPrev), Some(3));
        assert_eq!(pos(b"b1", Find::PrefixLastOrPrev), Some(3));
        use RangeEnd::*;
        assert_eq!(t.records_in_range(None, None), 6);
        assert!(t.records_in_range(Some(Including(b"c")), Some(Excluding(b"a"))) <= 1);
        assert!(t.records_in_range(Some(Including(b"z")), None) >= 1);
        let e = t.find(b"b1", Find::Exact).unwrap();
        assert_eq!(t.next(e).map(|e| e.1), Some(3));
        assert_eq!(t.prev(e).map(|e| e.1), Some(1));
        t.debug_check_consistency();
    }
}
