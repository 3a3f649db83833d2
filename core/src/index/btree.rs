//! BTREE indexes: rows ordered by key image, then by position, in a tree shaped as HEAP's.
//!
//! Images of one index all have the same length, and the image of a key prefix is a prefix of
//! the whole image, so a search for a partial key compares only the prefix's bytes. Rows with
//! equal keys are ordered by position (HEAP orders them by the address of the row, which no
//! result can rely on).
//!
//! A node keeps its row and the first [`HEAD`] bytes of its key's image: 32 bytes with its
//! links, against HEAP's tree element, key and row pointer (about 30 bytes and the key's).
//! Most comparisons end in those bytes; the others read the rest of the image from the row
//! ([`Keys`]). An image of at most `HEAD` bytes (integer, date and short keys) is all there.

use super::rbtree::RbTree;
use super::rows::{Keys, MAX_POS};
use crate::alloc::Arena;
use crate::error::{Error, Result};
use crate::rows::records::Pos;
use std::cmp::Ordering;

/// Bytes of its key's image a node keeps.
pub const HEAD: usize = 20;

/// An entry as a scan sees it: the key image and the row.
pub type EntryRef<'a> = (&'a [u8], Pos);

/// An entry kept outside the index: where a scan stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Entry {
    pub image: Vec<u8>,
    pub pos: Pos,
}

impl Entry {
    /// The entry of row `pos`, its image read from the row.
    pub fn of_row(pos: Pos, rows: &impl Keys) -> Result<Entry> {
        let mut entry = Entry::default();
        entry.move_to(pos, rows)?;
        Ok(entry)
    }

    /// Moves to the entry of row `pos`, reusing the image's buffer.
    pub fn move_to(&mut self, pos: Pos, rows: &impl Keys) -> Result<()> {
        rows.key_image(pos, &mut self.image)?;
        self.pos = pos;
        Ok(())
    }

    pub fn as_ref(&self) -> EntryRef<'_> {
        (&self.image, self.pos)
    }
}

/// An entry in the tree: its row, and the first bytes of its image (zeros past its end).
#[derive(Debug, Clone, Copy, Default)]
struct Stored {
    row: u32,
    head: [u8; HEAD],
}

impl Stored {
    fn pos(&self) -> Pos {
        Pos::from(self.row)
    }
}

#[derive(Debug)]
pub struct BtreeIndex {
    tree: RbTree<Stored>,
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

/// How an entry's key, cut to `prefix`'s length, orders against `prefix`: from its head
/// when that decides, else from its row.
#[inline]
fn cmp_prefix(e: &Stored, prefix: &[u8], rows: &impl Keys) -> Result<Ordering> {
    let n = prefix.len().min(HEAD);
    match e.head[..n].cmp(&prefix[..n]) {
        Ordering::Equal if prefix.len() > HEAD => rows.cmp_key(e.pos(), prefix),
        o => Ok(o),
    }
}

/// How an entry orders against the entry `(image, pos)` (a whole image).
#[inline]
fn cmp_entry(e: &Stored, (image, pos): EntryRef<'_>, rows: &impl Keys) -> Result<Ordering> {
    Ok(cmp_prefix(e, image, rows)?.then(e.pos().cmp(&pos)))
}

impl BtreeIndex {
    pub fn new(image_len: usize, arena: &Arena) -> BtreeIndex {
        BtreeIndex {
            tree: RbTree::new_in(arena),
            image_len,
        }
    }

    /// Whether some row's key equals `image` (a whole key).
    pub fn contains(&self, image: &[u8], rows: &impl Keys) -> Result<bool> {
        Ok(self.find(image, Find::Exact, rows)?.is_some())
    }

    /// Whether row `pos` is in the index under `image`.
    pub fn contains_entry(&self, image: &[u8], pos: Pos, rows: &impl Keys) -> Result<bool> {
        self.tree.contains_by(|s| cmp_entry(s, (image, pos), rows))
    }

    /// Adds row `pos` under `image`; on an error the index is as before.
    pub fn insert(&mut self, image: &[u8], pos: Pos, rows: &impl Keys) -> Result<()> {
        debug_assert_eq!(image.len(), self.image_len);
        if pos > MAX_POS {
            return Err(Error::TableFull);
        }
        let mut stored = Stored {
            row: pos as u32,
            head: [0; HEAD],
        };
        let n = image.len().min(HEAD);
        stored.head[..n].copy_from_slice(&image[..n]);
        self.tree
            .try_insert_by(stored, |s| cmp_entry(s, (image, pos), rows))?;
        Ok(())
    }

    /// Removes row `pos` from under `image`; false if it was not there. The entry of `pos`
    /// is known by its row, whatever the row holds now: an update that failed takes out the
    /// entry of a new key before the row has it.
    pub fn remove(&mut self, image: &[u8], pos: Pos, rows: &impl Keys) -> Result<bool> {
        self.tree.remove_by(|s| match s.pos() == pos {
            true => Ok(Ordering::Equal),
            false => cmp_entry(s, (image, pos), rows),
        })
    }

    /// The first entry whose key is at or after (`or_equal`) / after `prefix`.
    fn first_from(
        &self,
        prefix: &[u8],
        or_equal: bool,
        rows: &impl Keys,
    ) -> Result<Option<&Stored>> {
        self.tree.first_where(|e| {
            Ok(match cmp_prefix(e, prefix, rows)? {
                Ordering::Equal => or_equal,
                o => o == Ordering::Greater,
            })
        })
    }

    /// The last entry whose key is at or before (`or_equal`) / before `prefix`.
    fn last_to(&self, prefix: &[u8], or_equal: bool, rows: &impl Keys) -> Result<Option<&Stored>> {
        self.tree.last_where(|e| {
            Ok(match cmp_prefix(e, prefix, rows)? {
                Ordering::Equal => or_equal,
                o => o == Ordering::Less,
            })
        })
    }

    /// The row a search for `prefix` lands on.
    pub fn find(&self, prefix: &[u8], how: Find, rows: &impl Keys) -> Result<Option<Pos>> {
        // Only an entry whose key starts with the prefix.
        let starting = |e: Option<&Stored>| -> Result<Option<Pos>> {
            Ok(match e {
                Some(e) if cmp_prefix(e, prefix, rows)? == Ordering::Equal => Some(e.pos()),
                _ => None,
            })
        };
        let pos = |e: Option<&Stored>| e.map(Stored::pos);
        Ok(match how {
            Find::Exact => starting(self.first_from(prefix, true, rows)?)?,
            Find::KeyOrNext => pos(self.first_from(prefix, true, rows)?),
            Find::AfterKey => pos(self.first_from(prefix, false, rows)?),
            // HEAP's tree search moves left on an equal key for this flag as for Exact, so it
            // lands on the first entry equal to the key, and only without one on the last
            // before it.
            Find::KeyOrPrev => match starting(self.first_from(prefix, true, rows)?)? {
                Some(p) => Some(p),
                None => pos(self.last_to(prefix, false, rows)?),
            },
            Find::PrefixLastOrPrev => pos(self.last_to(prefix, true, rows)?),
            Find::BeforeKey => pos(self.last_to(prefix, false, rows)?),
            Find::PrefixLast => starting(self.last_to(prefix, true, rows)?)?,
        })
    }

    pub fn first(&self) -> Option<Pos> {
        self.tree.first().map(Stored::pos)
    }

    pub fn last(&self) -> Option<Pos> {
        self.tree.last().map(Stored::pos)
    }

    /// The row after entry `e` (which may have been removed since).
    pub fn next(&self, e: EntryRef<'_>, rows: &impl Keys) -> Result<Option<Pos>> {
        let found = self
            .tree
            .first_where(|x| Ok(cmp_entry(x, e, rows)? == Ordering::Greater))?;
        Ok(found.map(Stored::pos))
    }

    /// The row before entry `e` (which may have been removed since).
    pub fn prev(&self, e: EntryRef<'_>, rows: &impl Keys) -> Result<Option<Pos>> {
        let found = self
            .tree
            .last_where(|x| Ok(cmp_entry(x, e, rows)? == Ordering::Less))?;
        Ok(found.map(Stored::pos))
    }

    /// MEMORY's estimate of the rows between two ends (None: from the start / to the end),
    /// read off the tree's shape as HEAP reads it (`hp_rb_records_in_range`): never 0 unless
    /// the ends cross.
    pub fn records_in_range(
        &self,
        min: Option<RangeEnd<'_>>,
        max: Option<RangeEnd<'_>>,
        rows: &impl Keys,
    ) -> Result<u64> {
        let pos = |end: RangeEnd<'_>, is_min: bool| {
            let (p, after) = match end {
                RangeEnd::Including(p) => (p, !is_min),
                RangeEnd::Excluding(p) => (p, is_min),
            };
            self.tree.record_pos(|e| cmp_prefix(e, p, rows), after)
        };
        let start = match min {
            Some(m) => pos(m, true)?,
            None => 0,
        };
        let end = match max {
            Some(m) => pos(m, false)?,
            None => self.tree.len() as u64 + 1,
        };
        Ok(match end.cmp(&start) {
            Ordering::Less => 0,
            Ordering::Equal => 1,
            Ordering::Greater => end - start,
        })
    }

    pub fn entries(&self) -> u64 {
        self.tree.len() as u64
    }

    pub fn clear(&mut self) {
        self.tree.clear();
    }

    /// Checks the invariants against the rows' keys; panics on a violation.
    pub fn debug_check_consistency(&self, rows: &impl Keys) {
        let image = |s: &Stored| {
            let mut img = Vec::new();
            rows.key_image(s.pos(), &mut img).expect("a row's image");
            assert_eq!(
                img.len(),
                self.image_len,
                "every image has the index's length"
            );
            let n = img.len().min(HEAD);
            assert_eq!(
                s.head[..n],
                img[..n],
                "row {}: the head is its image's",
                s.row
            );
            img
        };
        self.tree
            .debug_check_consistency(|a, b| (image(a), a.row).cmp(&(image(b), b.row)));
        let mut seen = std::collections::HashSet::new();
        for s in self.tree.iter() {
            assert!(seen.insert(s.row), "row {} is in the index once", s.row);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::rows::Images;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn index(keys: &[(&[u8], Pos)], rows: &Images) -> BtreeIndex {
        let len = keys.first().map_or(2, |k| k.0.len());
        let mut t = BtreeIndex::new(len, &Arena::new(16, 0, u64::MAX));
        for (k, p) in keys {
            rows.set(*p, k);
            t.insert(k, *p, rows).unwrap();
        }
        t
    }

    #[test]
    fn searches_land_where_heap_lands() {
        let rows = Images::default();
        let t = index(
            &[(b"a1", 0), (b"a2", 1), (b"b1", 2), (b"b1", 3), (b"c0", 4)],
            &rows,
        );
        let pos = |p: &[u8], how| t.find(p, how, &rows).unwrap();
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
        let range = |a, b| t.records_in_range(a, b, &rows).unwrap();
        assert_eq!(range(None, None), 6);
        assert!(range(Some(Including(b"c")), Some(Excluding(b"a"))) <= 1);
        assert!(range(Some(Including(b"z")), None) >= 1);
        let e = (&b"b1"[..], 2);
        assert_eq!(t.next(e, &rows).unwrap(), Some(3));
        assert_eq!(t.prev(e, &rows).unwrap(), Some(1));
        assert_eq!((t.first(), t.last()), (Some(0), Some(4)));
        t.debug_check_consistency(&rows);
    }

    #[test]
    fn an_entry_is_removed_by_its_row_whatever_the_row_holds() {
        let rows = Images::default();
        let mut t = index(&[(b"a1", 0), (b"b1", 1), (b"c1", 2)], &rows);
        // Row 1 now holds "z9" (an update stored it), its entry still under "b1".
        rows.set(1, b"z9");
        assert!(t.remove(b"b1", 1, &rows).unwrap());
        assert!(!t.remove(b"b1", 1, &rows).unwrap());
        assert_eq!(t.entries(), 2);
        t.debug_check_consistency(&rows);
    }

    /// An image of `HEAD` bytes or more: the first ones shared by many keys, so that
    /// comparisons go on to the rows.
    fn long(k: u16) -> Vec<u8> {
        let mut v = vec![b'x'; HEAD + 4];
        v[HEAD - 2..HEAD + 2].copy_from_slice(&(k / 7).to_be_bytes().repeat(2));
        v[HEAD + 2..].copy_from_slice(&k.to_be_bytes());
        v
    }

    impl std::fmt::Debug for Images {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("Images")
        }
    }

    proptest! {

        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::testing::cases(256)))]
        /// Against a BTreeSet of (image, row): long images whose heads often tie.
        #[test]
        fn matches_a_sorted_set(ops in prop::collection::vec((any::<bool>(), 0u16..200), 1..300)) {
            let rows = Images::default();
            let mut t = BtreeIndex::new(HEAD + 4, &Arena::new(16, 0, u64::MAX));
            let mut m = BTreeSet::new();
            for (ins, k) in ops {
                let (img, pos) = (long(k), Pos::from(k % 50));
                if ins {
                    if m.iter().any(|(_, p)| *p == pos) {
                        continue;
                    }
                    rows.set(pos, &img);
                    t.insert(&img, pos, &rows).unwrap();
                    m.insert((img.clone(), pos));
                } else {
                    // The table removes a row's own entry, or a row not in the index.
                    match m.iter().find(|e| e.1 == pos).cloned() {
                        Some(e) => {
                            m.remove(&e);
                            prop_assert!(t.remove(&e.0, pos, &rows).unwrap());
                        }
                        None => prop_assert!(!t.remove(&img, pos, &rows).unwrap()),
                    }
                }
                t.debug_check_consistency(&rows);
                let after = m.range((img.clone(), 0)..).next().map(|e| e.1);
                prop_assert_eq!(t.find(&img, Find::KeyOrNext, &rows).unwrap(), after);
                let prefix = &img[..HEAD + 2];
                let last = m.iter().rev().find(|e| e.0.starts_with(prefix)).map(|e| e.1);
                let got = t.find(prefix, Find::PrefixLast, &rows).unwrap();
                prop_assert_eq!(got, last);
            }
        }
    }
}
