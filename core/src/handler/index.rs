//! The index reads of a handler: reads by key, scans in key order, range estimates (the
//! cursor they move: [`crate::handler::cursor`]).

use super::{Handler, State};
use crate::error::{Error, Result};
use crate::handler::cursor::{Bound, BoundFlag, Cursor};
use crate::index::{Entry, Find, Index, Keys, RangeEnd};
use crate::key::{KeyDef, Row};
use crate::rows::records::Pos;
use crate::table::Table;

/// A bound's key image, flag and length.
type Image = (Vec<u8>, BoundFlag, u32);

fn image_of(def: &KeyDef, b: Option<Bound<'_>>) -> Result<Option<Image>> {
    let Some(b) = b else {
        return Ok(None);
    };
    let parts = def.parts_in_map(b.keypart_map);
    let key = (b.key)(def.key_format_len(parts))?;
    Ok(Some((
        def.image_of_key(key, parts)?.bytes,
        b.flag,
        b.length,
    )))
}

/// A bound as a [`RangeEnd`]: `including` / `excluding` are the flags that keep or leave out
/// rows equal to the bound; Err for any other flag.
fn range_end(
    b: &Option<Image>,
    including: BoundFlag,
    excluding: BoundFlag,
) -> std::result::Result<Option<RangeEnd<'_>>, ()> {
    match b {
        None => Ok(None),
        Some((img, f, _)) if *f == including => Ok(Some(RangeEnd::Including(img))),
        Some((img, f, _)) if *f == excluding => Ok(Some(RangeEnd::Excluding(img))),
        Some(_) => Err(()),
    }
}

/// Copies row `pos` into `out` and makes it the current row.
#[inline(always)]
fn land(h: &mut State, table: &Table, out: &mut [u8], pos: Pos) -> Result<()> {
    table.read_into(pos, out, &mut h.blobs)?;
    h.current = Some(pos);
    Ok(())
}

/// Puts the cursor on row `pos`'s entry, reusing its image buffer when it already is on a
/// BTREE entry.
fn move_btree_cursor(cursor: &mut Cursor, pos: Pos, rows: &impl Keys) -> Result<()> {
    match cursor {
        Cursor::Btree { entry } => entry.move_to(pos, rows),
        _ => {
            *cursor = Cursor::Btree {
                entry: Entry::of_row(pos, rows)?,
            };
            Ok(())
        }
    }
}

/// HEAP's last HASH key (`hash_last`, [`State`]'s, zeros past its length) read as a key of
/// `def`: its bytes in the key format, and its image.
fn last_hash_key(hash_last: &[u8], def: &KeyDef) -> Result<(Vec<u8>, crate::key::Image)> {
    let len = def.key_format_len(def.segs.len());
    let mut last = Vec::new();
    last.try_reserve_exact(len)?;
    last.extend(
        (hash_last.iter().copied())
            .chain(std::iter::repeat(0))
            .take(len),
    );
    let image = def.image_of_key(&last, def.segs.len())?;
    Ok((last, image))
}

/// A step from off the rows of a HASH key towards them ([`Cursor::HashEdge`]): HEAP searches
/// its last key again: forwards, its newest row; backwards, its oldest. The row found and the
/// cursor's next place.
fn hash_edge_step(
    h: &mut State,
    def: &KeyDef,
    hash: &crate::index::hash::HashIndex,
    table: &Table,
    forward: bool,
) -> Result<(Option<Pos>, Cursor)> {
    let (last, image) = last_hash_key(&h.hash_last, def)?;
    h.key = image;
    let rows = table.row_keys(h.cursor_key).for_key(&last);
    Ok(match hash.end_of(&h.key.bytes, forward, &rows)? {
        Some((pos, at)) => (Some(pos), Cursor::Hash { pos, at }),
        None => (None, Cursor::HashEdge { after: forward }),
    })
}

impl<L> Handler<L> {
    /// `handler::index_read_map`: the row `find` names for the first parts (`keypart_map`) of
    /// a key of index `index`, into `out`; `key` gives the key (server key format) when asked
    /// for its length. `find` None is a search HEAP lacks: nothing is found on a BTREE key (a
    /// HASH key looks the whole key up whatever the search).
    pub fn index_read_map<'k>(
        &mut self,
        out: &mut [u8],
        index: usize,
        keypart_map: u64,
        find: Option<Find>,
        key: impl FnOnce(usize) -> Result<&'k [u8]>,
    ) -> Result<()> {
        let (open, h) = self.parts()?;
        // Until a row is found there is none (HEAP's position() then gives no row).
        h.current = None;
        let table = open.read()?;
        let (def, idx) = table.index(index)?;
        let parts = def.parts_in_map(keypart_map);
        let key_bytes = key(def.key_format_len(parts))?;
        def.image_of_key_into(key_bytes, parts, &mut h.key)?;
        h.cursor_key = index;
        h.seen_key_version = table.key_version();
        let found = match idx {
            Index::Hash(hash) if parts == def.segs.len() => {
                let rows = table.row_keys(index).for_key(key_bytes);
                let pos = hash.newest(&h.key.bytes, &rows)?;
                if let Some(pos) = pos {
                    h.cursor = Cursor::Hash { pos, at: 0 };
                    if !h.internal && def.hash_read_keeps_key() {
                        h.hash_last.clear();
                        h.hash_last.try_reserve(key_bytes.len())?;
                        h.hash_last.extend_from_slice(key_bytes);
                    }
                }
                pos
            }
            Index::Hash(_) => None,
            Index::Btree(tree) => {
                let rows = table.row_keys(index);
                let pos = match find {
                    Some(how) => tree.find(&h.key.bytes, how, &rows)?,
                    None => None,
                };
                if let Some(pos) = pos {
                    move_btree_cursor(&mut h.cursor, pos, &rows)?;
                }
                pos
            }
        };
        let Some(pos) = found else {
            h.cursor = match idx {
                Index::Btree(_) => Cursor::BtreeMissed,
                // HEAP: no row, and NEXT searches its last key again (not this one).
                Index::Hash(_) => Cursor::HashEdge { after: false },
            };
            return Err(Error::KeyNotFound);
        };
        land(h, &table, out, pos)
    }

    /// `handler::index_next` (`forward`) and `index_prev`: the next row in key order (BTREE),
    /// or the next or previous row with the same key (HASH, newest first, as HEAP steps
    /// through a hash chain: off its rows, the cursor searches HEAP's last key again,
    /// [`Cursor::HashEdge`]); [`Error::EndOfFile`] at the end.
    pub fn index_step(&mut self, out: &mut [u8], forward: bool) -> Result<()> {
        let (open, h) = self.parts()?;
        // Until a row is found there is none (HEAP's position() then gives no row).
        h.current = None;
        let table = open.read()?;
        let (def, idx) = table.index(h.cursor_key)?;
        // The cursor moves in place; `replace` is a cursor of another kind to take its place.
        let mut replace = None;
        let pos = match (&mut h.cursor, idx) {
            (Cursor::Hash { pos, at }, Index::Hash(hash)) => {
                if !forward
                    && !def.hash_read_keeps_key()
                    && last_hash_key(&h.hash_last, def)?.1.bytes != h.key.bytes
                {
                    // HEAP searches back along the chain for its last key, which the read of
                    // this unique key left as it was: the current row is not among its rows.
                    h.cursor = Cursor::HashEdge { after: false };
                    return Err(Error::RecordChanged);
                }
                let rows = table.row_keys(h.cursor_key);
                match hash.step_from(&h.key.bytes, (*pos, *at), forward, &rows)? {
                    Some((p, i)) => {
                        (*pos, *at) = (p, i);
                        Some(p)
                    }
                    None => {
                        replace = Some(Cursor::HashEdge { after: forward });
                        None
                    }
                }
            }
            (Cursor::HashEdge { after }, Index::Hash(hash)) if *after != forward => {
                let (p, c) = hash_edge_step(h, def, hash, &table, forward)?;
                replace = Some(c);
                p
            }
            (Cursor::Btree { entry }, Index::Btree(tree)) => {
                let rows = table.row_keys(h.cursor_key);
                let p = if forward {
                    tree.next(entry.as_ref(), &rows)?
                } else {
                    tree.prev(entry.as_ref(), &rows)?
                };
                match p {
                    Some(p) => {
                        entry.move_to(p, &rows)?;
                        Some(p)
                    }
                    None => {
                        replace = Some(Cursor::BtreeEdge { after: forward });
                        None
                    }
                }
            }
            (Cursor::BtreeMissed, Index::Btree(tree)) => {
                let rows = table.row_keys(h.cursor_key);
                let how = if forward {
                    Find::KeyOrNext
                } else {
                    Find::BeforeKey
                };
                match tree.find(&h.key.bytes, how, &rows)? {
                    Some(p) => {
                        replace = Some(Cursor::Btree {
                            entry: Entry::of_row(p, &rows)?,
                        });
                        Some(p)
                    }
                    None => {
                        replace = Some(Cursor::BtreeEdge { after: forward });
                        None
                    }
                }
            }
            (Cursor::BtreeEdge { after }, Index::Btree(tree)) if *after != forward => {
                let rows = table.row_keys(h.cursor_key);
                match if forward { tree.first() } else { tree.last() } {
                    Some(p) => {
                        replace = Some(Cursor::Btree {
                            entry: Entry::of_row(p, &rows)?,
                        });
                        Some(p)
                    }
                    None => None,
                }
            }
            _ => None,
        };
        if let Some(c) = replace {
            h.cursor = c;
        }
        let pos = pos.ok_or(Error::EndOfFile)?;
        land(h, &table, out, pos)
    }

    /// `handler::index_first` (`first`) and `index_last`: the first or last row of a BTREE
    /// key; HASH keys cannot be scanned in order ([`Error::WrongCommand`]).
    pub fn index_edge(&mut self, out: &mut [u8], index: usize, first: bool) -> Result<()> {
        let (open, h) = self.parts()?;
        // Until a row is found there is none (HEAP's position() then gives no row).
        h.current = None;
        let table = open.read()?;
        let Index::Btree(tree) = table.index(index)?.1 else {
            return Err(Error::WrongCommand);
        };
        h.cursor_key = index;
        h.seen_key_version = table.key_version();
        let pos = if first { tree.first() } else { tree.last() };
        let Some(pos) = pos else {
            h.cursor = Cursor::BtreeEdge { after: first };
            return Err(Error::EndOfFile);
        };
        move_btree_cursor(&mut h.cursor, pos, &table.row_keys(index))?;
        land(h, &table, out, pos)
    }

    /// `handler::records_in_range`: rows between two bounds. BTREE keys give MEMORY's estimate
    /// from the tree; HASH keys answer only for one exact whole key, from the statistics of the
    /// last `info`; `u64::MAX` (HA_POS_ERROR) otherwise.
    pub fn records_in_range(
        &mut self,
        index: usize,
        min: Option<Bound<'_>>,
        max: Option<Bound<'_>>,
    ) -> Result<u64> {
        use BoundFlag::{AfterKey, BeforeKey, KeyExact};
        let (open, h) = self.parts()?;
        let table = open.read()?;
        let (def, idx) = table.index(index)?;
        let (lo, hi) = (image_of(def, min)?, image_of(def, max)?);
        match idx {
            Index::Btree(tree) => {
                match (
                    range_end(&lo, KeyExact, AfterKey),
                    range_end(&hi, AfterKey, BeforeKey),
                ) {
                    (Ok(min), Ok(max)) => tree.records_in_range(min, max, &table.row_keys(index)),
                    _ => Ok(u64::MAX),
                }
            }
            Index::Hash(_) => match (lo, hi) {
                (Some((_, KeyExact, ll)), Some((_, AfterKey, hl)))
                    if ll == hl && ll as usize == def.key_length =>
                {
                    if h.stats_records <= 1 {
                        Ok(h.stats_records)
                    } else {
                        Ok(h.rec_per_key.get(index).copied().flatten().unwrap_or(2))
                    }
                }
                _ => Ok(u64::MAX),
            },
        }
    }

    /// `handler::find_unique_row`: the row whose unique HASH key `index` equals `record`'s,
    /// copied into `record`; false when there is none.
    ///
    /// # Safety
    /// When the key has a BLOB part, `record`'s BLOB pointers must be valid for their lengths
    /// (the server's record guarantees it).
    pub unsafe fn find_unique_row(&mut self, record: &mut [u8], index: usize) -> Result<bool> {
        let (open, h) = self.parts()?;
        let table = open.read()?;
        let (def, idx) = table.index(index)?;
        let Index::Hash(hash) = idx else {
            return Err(Error::WrongCommand);
        };
        if def.has_blobs() {
            // A key over a BLOB reads it from the packed row.
            let format = &table.def().format;
            // SAFETY: the caller's contract: the record's BLOB pointers are valid.
            unsafe { format.pack(record, &mut h.packed) }?;
            def.image_of_row_into(Row::packed(record, format, &h.packed), &mut h.key)?;
        } else {
            def.image_of_record_into(record, &mut h.key)?;
        }
        let Some(pos) = hash.lookup(&h.key.bytes, &table.row_keys(index))?.next() else {
            return Ok(false);
        };
        h.cursor_key = index;
        h.cursor = Cursor::Hash { pos, at: 0 };
        land(h, &table, record, pos)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod hash_tests;
