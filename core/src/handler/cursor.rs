//! Where an index scan of a handler stands.
//!
//! A HASH key answers whole-key lookups only, returning rows with equal keys newest first (as
//! HEAP's hash chains do); a BTREE key also scans in key order from any point. The cursor of a
//! scan is a position in the index (key image and row), so deleting the current row does not
//! lose the scan's place.

use crate::error::Result;
use crate::index::Entry;
use crate::rows::records::Pos;

/// Where an index scan stands.
#[derive(Debug, Default, Clone)]
pub enum Cursor {
    #[default]
    None,
    /// On a row of a HASH key (whose image is the handler's `key`): the row, and how many
    /// rows of the key came before it.
    Hash { pos: Pos, at: usize },
    /// Off the rows of a HASH key, as HEAP's hash reads leave it: past the last row (`after`:
    /// a NEXT found no more), or before the first (a PREV found no more, or a read found no
    /// row). A step the other way searches the handler's last HASH key again
    /// ([`crate::handler::State`]'s `hash_last`): forwards from its newest row, backwards
    /// from its oldest; a step the same way finds nothing.
    HashEdge { after: bool },
    /// On an entry of a BTREE key.
    Btree { entry: Entry },
    /// Past the last (`after`) or before the first entry of a BTREE key.
    BtreeEdge { after: bool },
    /// Where a read of a BTREE key that found nothing left it (HEAP's `HA_STATE_NO_KEY` with
    /// no last position): the next row is the first at or after the key read (the handler's
    /// `key`), the previous one the last before it. (HEAP searches again from the key read:
    /// forwards as far as its parts go, backwards on the whole key's bytes and then the row's
    /// address, which the key read has as zeroes, so rows equal to it come after it.)
    BtreeMissed,
}

/// How a bound of `records_in_range` treats rows equal to its key (the server's search flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoundFlag {
    /// `HA_READ_KEY_EXACT`.
    KeyExact,
    /// `HA_READ_AFTER_KEY`.
    AfterKey,
    /// `HA_READ_BEFORE_KEY`.
    BeforeKey,
    /// Any other flag: no estimate.
    Other,
}

/// One bound of a range: the first parts (`keypart_map`) of a key in the server's key format,
/// which `key` gives when asked for its length in bytes.
#[derive(Clone, Copy)]
pub struct Bound<'k> {
    pub keypart_map: u64,
    pub flag: BoundFlag,
    /// The key's length as the server gives it.
    pub length: u32,
    pub key: &'k dyn Fn(usize) -> Result<&'k [u8]>,
}

impl std::fmt::Debug for Bound<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bound")
            .field("keypart_map", &self.keypart_map)
            .field("flag", &self.flag)
            .field("length", &self.length)
            .finish_non_exhaustive()
    }
}
