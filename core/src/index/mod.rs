//! A table's indexes: one [`Index`] per key, HASH or BTREE, each mapping key images
//! ([`crate::key`]) to row positions. A HASH index compares keys with its table's stored rows
//! ([`rows`]).

pub mod btree;
pub mod hash;
pub mod rbtree;
pub mod rows;

use crate::alloc::Arena;
use crate::error::Result;
use crate::key::{Algorithm, KeyDef};
use crate::rows::records::Pos;
pub use btree::{BtreeIndex, Entry, EntryRef, Find, RangeEnd};
pub use hash::HashIndex;
pub use rows::{Keys, Probe, RowKeys, MAX_POS};

#[derive(Debug)]
pub enum Index {
    Hash(HashIndex),
    Btree(BtreeIndex),
}

impl Index {
    /// An empty index for key `def`, its memory in `arena`, of rows whose positions are
    /// `stride` apart at least.
    pub fn new(def: &KeyDef, arena: &Arena, stride: u32) -> Index {
        match def.algorithm {
            Algorithm::Hash => Index::Hash(HashIndex::with_stride(arena, stride)),
            Algorithm::Btree => Index::Btree(BtreeIndex::new(def.image_len(), arena)),
        }
    }

    /// Whether some row has key `image`; `rows` are the table's.
    pub fn contains(&self, image: &[u8], rows: &impl Keys) -> Result<bool> {
        match self {
            Index::Hash(h) => h.contains(image, rows),
            Index::Btree(b) => b.contains(image, rows),
        }
    }

    /// Adds row `pos` under `image`; `absent`: no row has this key (the caller checked).
    pub fn insert(&mut self, image: &[u8], pos: Pos, absent: bool, rows: &impl Keys) -> Result<()> {
        match self {
            Index::Hash(h) => h.insert(image, pos, absent, rows),
            Index::Btree(b) => b.insert(image, pos, rows),
        }
    }

    /// Makes row `pos` the newest of its key `image` (HASH keys keep rows with equal keys
    /// newest first; a BTREE key orders them by position, so it has nothing to do).
    pub fn make_newest(&mut self, image: &[u8], pos: Pos) {
        if let Index::Hash(h) = self {
            h.make_newest(image, pos);
        }
    }

    /// Removes row `pos` from under `image`; false if it was not there.
    pub fn remove(&mut self, image: &[u8], pos: Pos, rows: &impl Keys) -> Result<bool> {
        match self {
            Index::Hash(h) => Ok(h.remove(image, pos)),
            Index::Btree(b) => b.remove(image, pos, rows),
        }
    }

    pub fn clear(&mut self) {
        match self {
            Index::Hash(h) => h.clear(),
            Index::Btree(b) => b.clear(),
        }
    }

    pub fn entries(&self) -> u64 {
        match self {
            Index::Hash(h) => h.entries(),
            Index::Btree(b) => b.entries(),
        }
    }

    /// Checks the invariants (with the table's `rows`); panics on a violation.
    pub fn debug_check_consistency(&self, rows: &impl Keys) {
        match self {
            Index::Hash(h) => h.debug_check_consistency(),
            Index::Btree(b) => b.debug_check_consistency(rows),
        }
    }
}
