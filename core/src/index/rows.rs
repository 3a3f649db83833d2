//! What an index reads of its table's rows. An index keeps little or nothing of its keys: a
//! HASH index, as HEAP's, holds row positions and compares a key with the key of a stored row;
//! a BTREE index keeps the first bytes of each key and reads the rest from the row ([`Keys`]).

use crate::error::{Error, Result};
use crate::key::{bytes_eq, Image, KeyDef, Row};
use crate::rows::records::Pos;
use crate::rows::store::RowStore;
use std::cell::RefCell;
use std::cmp::Ordering;

pub use crate::rows::records::MAX_POS;

/// The keys of a table's stored rows under one index.
pub trait Keys {
    /// Whether row `pos` has the key whose image is `image`.
    fn has_key(&self, pos: Pos, image: &[u8]) -> Result<bool>;

    /// How the image of row `pos`'s key, cut to `image`'s length (a key prefix's), orders
    /// against `image`.
    fn cmp_key(&self, pos: Pos, image: &[u8]) -> Result<Ordering>;

    /// The image of row `pos`'s key, into `out`.
    fn key_image(&self, pos: Pos, out: &mut Vec<u8>) -> Result<()>;
}

/// [`Keys`] of the rows of a [`RowStore`] under key `def`.
#[derive(Debug)]
pub struct RowKeys<'a> {
    pub store: &'a RowStore,
    pub def: &'a KeyDef,
    /// Bytes of a record (to unpack a packed row into).
    pub rec_len: usize,
    /// The key being looked for as the server gave it, when there is one: a stored row that
    /// holds the same bytes has it, with no weights computed (most hits of a GROUP BY).
    pub probe: Probe<'a>,
}

/// The key a search is for, as the server gave it (see [`RowKeys::probe`]).
#[derive(Debug, Clone, Copy)]
pub enum Probe<'a> {
    /// Only its image.
    Image,
    /// A record that has it.
    Record(&'a [u8]),
    /// The key format of every segment.
    Key(&'a [u8]),
}

impl<'a> RowKeys<'a> {
    /// The same rows, searched for the key `record` has.
    pub fn for_record(self, record: &'a [u8]) -> RowKeys<'a> {
        RowKeys {
            probe: Probe::Record(record),
            ..self
        }
    }

    /// The same rows, searched for `key` (key format, every segment).
    pub fn for_key(self, key: &'a [u8]) -> RowKeys<'a> {
        RowKeys {
            probe: Probe::Key(key),
            ..self
        }
    }

    /// Whether the stored record `rec` holds the probe's bytes (so it has its key).
    #[inline]
    fn holds_probe(&self, rec: &[u8]) -> bool {
        match self.probe {
            Probe::Image => false,
            Probe::Record(r) => self.def.records_hold_same_key(rec, r),
            Probe::Key(k) => self.def.record_holds_key(rec, k),
        }
    }
}

/// A thread's buffers for a stored row's record and image: a compare allocates nothing once
/// they have grown to the table's sizes.
#[derive(Default)]
struct Scratch {
    rec: Vec<u8>,
    blobs: Vec<u8>,
    image: Image,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::default();
}

/// Frees this thread's compare buffers (the plugin is unloading: a thread's buffers are
/// otherwise freed when it ends).
pub fn release_scratch() {
    SCRATCH.with(|s| {
        if let Ok(mut s) = s.try_borrow_mut() {
            *s = Scratch::default();
        }
    });
}

impl RowKeys<'_> {
    /// Runs `f` on the image of row `pos`'s key.
    fn with_image<T>(&self, pos: Pos, f: impl FnOnce(&[u8]) -> T) -> Result<T> {
        self.with_record(pos, |row, own| {
            self.def.image_of_row_into(row, own)?;
            Ok(f(&own.bytes))
        })
    }

    /// Runs `f` on row `pos` as a record (unpacked into this thread's scratch when rows are
    /// packed, with its packed form) and the scratch image.
    fn with_record<T>(
        &self,
        pos: Pos,
        f: impl FnOnce(Row<'_>, &mut Image) -> Result<T>,
    ) -> Result<T> {
        SCRATCH.with(|s| match s.try_borrow_mut() {
            Ok(mut s) => self.record_with(pos, f, &mut s),
            // Not reached (a compare calls no other); buffers of its own then.
            Err(_) => self.record_with(pos, f, &mut Scratch::default()),
        })
    }

    fn record_with<T>(
        &self,
        pos: Pos,
        f: impl FnOnce(Row<'_>, &mut Image) -> Result<T>,
        s: &mut Scratch,
    ) -> Result<T> {
        let Scratch {
            rec,
            blobs,
            image: own,
        } = s;
        let row = if self.store.is_packed() {
            crate::alloc::resize_default(rec, self.rec_len)?;
            self.store.read_into(pos, rec, blobs)?;
            match self.def.has_blobs() {
                // A BLOB's bytes are read where they are stored.
                true => {
                    let stored = self.store.stored(pos).ok_or(Error::RecordDeleted)?;
                    Row::packed(&rec[..], self.store.format(), stored)
                }
                false => Row::plain(&rec[..]),
            }
        } else {
            Row::plain(self.store.stored(pos).ok_or(Error::RecordDeleted)?)
        };
        let r = f(row, own);
        // A BLOB's room is not kept past the compare.
        crate::alloc::trim(blobs, self.rec_len);
        r
    }
}

impl Keys for RowKeys<'_> {
    #[inline]
    fn has_key(&self, pos: Pos, image: &[u8]) -> Result<bool> {
        if matches!(self.probe, Probe::Image) {
            return self.with_image(pos, |own| bytes_eq(own, image));
        }
        if !self.store.is_packed() {
            // A stored record is its row: its bytes are compared without a copy.
            let rec = self.store.stored(pos).ok_or(Error::RecordDeleted)?;
            if self.holds_probe(rec) {
                return Ok(true);
            }
            return self.with_image(pos, |own| bytes_eq(own, image));
        }
        // A packed row is unpacked once, for both compares.
        self.with_record(pos, |row, own| {
            if self.holds_probe(row.rec) {
                return Ok(true);
            }
            self.def.image_of_row_into(row, own)?;
            Ok(bytes_eq(&own.bytes, image))
        })
    }

    #[inline]
    fn cmp_key(&self, pos: Pos, image: &[u8]) -> Result<Ordering> {
        self.with_image(pos, |own| own[..image.len().min(own.len())].cmp(image))
    }

    fn key_image(&self, pos: Pos, out: &mut Vec<u8>) -> Result<()> {
        self.with_image(pos, |own| {
            out.clear();
            out.try_reserve(own.len())?;
            out.extend_from_slice(own);
            Ok(())
        })?
    }
}

/// Rows for an index's tests: a map from position to key image.
#[cfg(test)]
#[derive(Default)]
pub struct Images(pub RefCell<std::collections::HashMap<Pos, Vec<u8>>>);

#[cfg(test)]
impl Images {
    fn of(&self, pos: Pos) -> Result<Vec<u8>> {
        self.0
            .borrow()
            .get(&pos)
            .cloned()
            .ok_or(Error::RecordDeleted)
    }

    pub fn set(&self, pos: Pos, image: &[u8]) {
        self.0.borrow_mut().insert(pos, image.to_vec());
    }
}

#[cfg(test)]
impl Keys for Images {
    fn has_key(&self, pos: Pos, image: &[u8]) -> Result<bool> {
        Ok(self.of(pos)? == image)
    }

    fn cmp_key(&self, pos: Pos, image: &[u8]) -> Result<Ordering> {
        let own = self.of(pos)?;
        Ok(own[..image.len().min(own.len())].cmp(image))
    }

    fn key_image(&self, pos: Pos, out: &mut Vec<u8>) -> Result<()> {
        *out = self.of(pos)?;
        Ok(())
    }
}
