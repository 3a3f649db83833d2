//! What an index reads of its table's rows. A HASH index keeps no key of its own: as HEAP's,
//! it holds row positions and compares a key with the key of a stored row ([`Keys`]).

use crate::error::{Error, Result};
use crate::key::{bytes_eq, Image, KeyDef};
use crate::records::Pos;
use crate::row_store::RowStore;
use std::cell::RefCell;

/// The keys of a table's stored rows under one index.
pub trait Keys {
    /// Whether row `pos` has the key whose image is `image`.
    fn has_key(&self, pos: Pos, image: &[u8]) -> Result<bool>;
}

/// [`Keys`] of the rows of a [`RowStore`] under key `def`.
#[derive(Debug)]
pub struct RowKeys<'a> {
    pub store: &'a RowStore,
    pub def: &'a KeyDef,
    /// Bytes of a record (to unpack a packed row into).
    pub rec_len: usize,
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

impl RowKeys<'_> {
    fn has_key_with(&self, pos: Pos, image: &[u8], s: &mut Scratch) -> Result<bool> {
        let Scratch {
            rec,
            blobs,
            image: own,
        } = s;
        let record = if self.store.is_packed() {
            crate::alloc::resize_default(rec, self.rec_len)?;
            self.store.read_into(pos, rec, blobs)?;
            &rec[..]
        } else {
            self.store.stored(pos).ok_or(Error::RecordDeleted)?
        };
        self.def.image_of_record_into(record, own)?;
        let same = bytes_eq(&own.bytes, image);
        // A BLOB's room is not kept past the compare.
        crate::alloc::trim(blobs, self.rec_len);
        Ok(same)
    }
}

impl Keys for RowKeys<'_> {
    #[inline]
    fn has_key(&self, pos: Pos, image: &[u8]) -> Result<bool> {
        SCRATCH.with(|s| match s.try_borrow_mut() {
            Ok(mut s) => self.has_key_with(pos, image, &mut s),
            // Not reached (a compare calls no other); buffers of its own then.
            Err(_) => self.has_key_with(pos, image, &mut Scratch::default()),
        })
    }
}
