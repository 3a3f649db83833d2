//! Rows back to back: how an internal temporary table stores its packed rows.
//!
//! [`crate::rows::store`] gives a packed row a slot of 9 bytes (where its piece is, a live
//! marker) and a piece rounded up to a multiple of 8. For the server's GROUP BY, DISTINCT and
//! UNION tables, whose rows are a short string and a counter, that is a third of what a row
//! costs. Here a row is written where the last one ended, behind one header byte, and its
//! position is where it starts: no slot array, one read to reach a row.
//!
//! ```text
//! block:  | h | row ........ | h | row ..... pad | h | size | next free | ...
//!           LIVE               LIVE, slack 2      FREE
//! ```
//!
//! Each *home* is a header byte (a state in the top 3 bits, the slack in the low 5) and a
//! body of at least [`MIN_BODY`] bytes:
//! - `LIVE`: the packed row, then `slack` zero bytes. Its length comes from the row itself
//!   ([`RowFormat::packed_len`]).
//! - `FREE`: a deleted row's home: the body's size and the next free home (u32 each).
//! - `MOVED`: a row that no longer fits its home lives `AWAY` at the end; the home keeps the
//!   body's size and where the row went.
//! - `AWAY`: such a row (a body as `LIVE`'s); a scan passes it, its home stands for it.
//! - `DEAD`: an `AWAY` home given up (a later version of its row moved again, or the row
//!   went); only its size is kept.
//!
//! HEAP's scan order is kept: homes are visited in position order, a new row takes the most
//! recently freed home (HEAP's LIFO list of deleted slots) and stays there whatever its length,
//! through `MOVED`; a scan reports a `FREE` home as HEAP reports a freed slot. A duplicate
//! that HEAP writes into a new slot and frees again leaves only a mark here
//! ([`RowLog::mirror_duplicate`]): the next row takes that place, the end.
//!
//! Positions are kept in 32 bits by the indexes ([`MAX_POS`]); a log that would pass that is
//! full. The bytes a changed row leaves behind (`DEAD`, the spare room of a `MOVED` home) are
//! not reused before the table is emptied: internal tables change few rows' lengths.

use crate::alloc::meter::Meter;
use crate::alloc::policy::{Growth, MIN_BLOCK};
use crate::alloc::system::RawBlock;
use crate::error::{Error, Result};
use crate::rows::format::RowFormat;
use crate::rows::records::{Pos, Step, MAX_POS};

const LIVE: u8 = 1;
const FREE: u8 = 2;
const MOVED: u8 = 3;
const AWAY: u8 = 4;
const DEAD: u8 = 5;
/// Bits of the header holding the slack.
const SLACK_BITS: u32 = 5;
/// The most zero bytes a row's body may end with.
const MAX_SLACK: usize = (1 << SLACK_BITS) - 1;
/// The smallest body: room for a size and a link.
const MIN_BODY: usize = 8;
/// The smallest home: positions of rows are at least this far apart.
pub const MIN_HOME: u32 = 1 + MIN_BODY as u32;
/// log2 of the positions a page of [`RowLog::pages`] spans.
const PAGE_BITS: u32 = MIN_BLOCK.trailing_zeros();
/// No home: the end of the free list.
const NONE: u32 = u32::MAX;

/// A block and how much of it homes fill.
#[derive(Debug)]
struct Block {
    block: RawBlock,
    /// The position of its first byte.
    start: Pos,
    /// Bytes written from its start; all are initialised.
    used: usize,
}

/// A home, as read from its header.
#[derive(Debug, Clone, Copy)]
struct Home {
    block: usize,
    /// Offset of the header in the block.
    at: usize,
    state: u8,
    /// Bytes of the body.
    body: usize,
    /// Bytes of the row (`LIVE`, `AWAY`), else 0.
    len: usize,
}

impl Home {
    /// Bytes from its header to the next home's: the header and the body.
    fn size(self) -> Pos {
        1 + self.body as Pos
    }
}

#[derive(Debug)]
pub struct RowLog {
    first_growth: Growth,
    growth: Growth,
    blocks: Vec<Block>,
    /// The block of each [`PAGE_BITS`]-sized page of positions: every block's size is a
    /// multiple of a page (a power of two, at least [`MIN_BLOCK`]), so a position's block is
    /// one load away (2 bytes a KiB of rows).
    pages: Vec<u16>,
    /// The block rows are appended to; the blocks after it (kept by
    /// [`clear_keeping_blocks`](Self::clear_keeping_blocks)) are empty.
    current: usize,
    /// The most recently freed home; each `FREE` home holds the next one.
    free_head: u32,
    /// HEAP would hold a freed slot at the end ([`mirror_duplicate`](Self::mirror_duplicate)).
    tail_free: bool,
    records: u64,
    /// `FREE` homes.
    freed: u64,
    bytes: usize,
    meter: Meter,
}

/// Whether a row of `len` bytes may live in a body of `body` bytes.
fn fits(body: usize, len: usize) -> bool {
    len <= body && body - len <= MAX_SLACK
}

fn corrupt() -> Error {
    Error::internal("a row position does not name a row")
}

/// Reads the row of the `LIVE` or `AWAY` home whose header is `bytes[at]` (`bytes` its block's
/// initialised bytes) with `read`, which returns the row's length; returns the body's size.
#[inline(always)]
fn read_home<'a>(
    bytes: &'a [u8],
    at: usize,
    read: impl FnOnce(&'a [u8]) -> Result<usize>,
) -> Result<usize> {
    let rest = &bytes[at + 1..];
    let body = read(rest)? + (usize::from(bytes[at]) & MAX_SLACK);
    match (MIN_BODY..=rest.len()).contains(&body) {
        true => Ok(body),
        false => Err(corrupt()),
    }
}

impl RowLog {
    /// A log whose first block is sized for `planned_rows` rows of about `row_len` bytes,
    /// within `limit`; its blocks are counted by `meter`.
    pub fn new(row_len: usize, planned_rows: u64, limit: u64, meter: Meter) -> RowLog {
        let growth = Growth::new(1 + row_len.max(MIN_BODY), planned_rows, limit);
        RowLog {
            first_growth: growth,
            growth,
            blocks: Vec::new(),
            pages: Vec::new(),
            current: 0,
            free_head: NONE,
            tail_free: false,
            records: 0,
            freed: 0,
            bytes: 0,
            meter,
        }
    }

    pub fn records(&self) -> u64 {
        self.records
    }

    /// HEAP's freed slots not yet reused.
    pub fn deleted(&self) -> u64 {
        self.freed + u64::from(self.tail_free)
    }

    /// HEAP's slots in use: rows and freed slots.
    pub fn slots(&self) -> u64 {
        self.records + self.deleted()
    }

    /// Whether HEAP would take a new slot for the next row rather than a freed one.
    pub fn needs_new_slot(&self) -> bool {
        self.free_head == NONE && !self.tail_free
    }

    /// Bytes of the blocks held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The initialised bytes of block `i`.
    fn used(&self, i: usize) -> &[u8] {
        let b = &self.blocks[i];
        // SAFETY: the first `used` bytes of a block were all written by `append`, and are
        // changed only through `&mut self`.
        unsafe { std::slice::from_raw_parts(b.block.ptr().as_ptr(), b.used) }
    }

    /// The initialised bytes of block `i`, to change.
    fn used_mut(&mut self, i: usize) -> &mut [u8] {
        let b = &self.blocks[i];
        // SAFETY: as in `used`; `&mut self` makes this the only reference to them.
        unsafe { std::slice::from_raw_parts_mut(b.block.ptr().as_ptr(), b.used) }
    }

    /// The block whose bytes position `pos` is among.
    #[inline(always)]
    fn block_of(&self, pos: Pos) -> Option<usize> {
        let page = usize::try_from(pos >> PAGE_BITS).ok()?;
        self.pages.get(page).map(|&i| usize::from(i))
    }

    /// The block holding position `pos` among those in use, and the offset in it.
    #[inline]
    fn locate(&self, pos: Pos) -> Option<(usize, usize)> {
        let i = self.block_of(pos)?;
        let b = &self.blocks[i];
        let at = (pos - b.start) as usize;
        (i <= self.current && at < b.used).then_some((i, at))
    }

    /// The home at offset `at` of block `i`.
    fn home_at(&self, i: usize, at: usize, format: &RowFormat) -> Result<Home> {
        let bytes = self.used(i);
        let h = bytes[at];
        let state = h >> SLACK_BITS;
        let rest = &bytes[at + 1..];
        let (body, len) = match state {
            LIVE | AWAY => {
                let len = format.packed_len(rest)?;
                (len + (usize::from(h) & MAX_SLACK), len)
            }
            FREE | MOVED | DEAD => (word(rest, 0)? as usize, 0),
            _ => return Err(corrupt()),
        };
        if body < MIN_BODY || body > rest.len() {
            return Err(corrupt());
        }
        Ok(Home {
            block: i,
            at,
            state,
            body,
            len,
        })
    }

    /// The home at `pos`.
    fn home(&self, pos: Pos, format: &RowFormat) -> Result<Home> {
        let (i, at) = self.locate(pos).ok_or(Error::RecordDeleted)?;
        self.home_at(i, at, format)
    }

    /// The body of `home`.
    fn body(&self, home: Home) -> &[u8] {
        &self.used(home.block)[home.at + 1..home.at + 1 + home.body]
    }

    fn body_mut(&mut self, home: Home) -> &mut [u8] {
        &mut self.used_mut(home.block)[home.at + 1..home.at + 1 + home.body]
    }

    /// The home a `MOVED` home's row lives in.
    fn away_of(&self, home: Home, format: &RowFormat) -> Result<Home> {
        let away = self.home(Pos::from(word(self.body(home), 4)?), format)?;
        match away.state {
            AWAY => Ok(away),
            _ => Err(corrupt()),
        }
    }

    /// The packed row `home` stands for (its own, or where it moved), if it holds one.
    fn row_of(&self, home: Home, format: &RowFormat) -> Result<&[u8]> {
        let at = match home.state {
            LIVE => home,
            MOVED => self.away_of(home, format)?,
            _ => return Err(Error::RecordDeleted),
        };
        Ok(&self.body(at)[..at.len])
    }

    /// The packed row at `pos`.
    #[inline]
    pub fn row(&self, pos: Pos, format: &RowFormat) -> Result<&[u8]> {
        self.row_of(self.home(pos, format)?, format)
    }

    /// Reads the row at `pos` with `read`, which is given the bytes from the row's start to
    /// its block's end and returns the row's length (as [`RowFormat::unpack_prefix`] does):
    /// a row read once, where [`row`](Self::row) walks it to find its end first.
    #[inline]
    pub fn read_with(&self, pos: Pos, read: impl FnOnce(&[u8]) -> Result<usize>) -> Result<()> {
        let (i, at) = self.locate(pos).ok_or(Error::RecordDeleted)?;
        let (bytes, at) = match self.used(i)[at] >> SLACK_BITS {
            LIVE => (self.used(i), at),
            MOVED => {
                let away = Pos::from(word(&self.used(i)[at + 1..], 4)?);
                let (j, at) = self.locate(away).ok_or_else(corrupt)?;
                match self.used(j)[at] >> SLACK_BITS {
                    AWAY => (self.used(j), at),
                    _ => return Err(corrupt()),
                }
            }
            FREE | DEAD | AWAY => return Err(Error::RecordDeleted),
            _ => return Err(corrupt()),
        };
        read_home(bytes, at, read).map(|_| ())
    }

    /// Writes `row` as `state` in `home`'s body, which fits it.
    fn fill_home(&mut self, home: Home, state: u8, row: &[u8]) {
        let slack = home.body - row.len();
        self.used_mut(home.block)[home.at] = state << SLACK_BITS | slack as u8;
        let body = self.body_mut(home);
        body[..row.len()].copy_from_slice(row);
        body[row.len()..].fill(0);
    }

    /// Makes `home` a home of `state` keeping its size and `link`.
    fn write_link(&mut self, home: Home, state: u8, link: u32) {
        self.used_mut(home.block)[home.at] = state << SLACK_BITS;
        let body = self.body_mut(home);
        body[..4].copy_from_slice(&(home.body as u32).to_le_bytes());
        body[4..8].copy_from_slice(&link.to_le_bytes());
    }

    /// Writes `row` as a new home of `state` where the last one ended. A row that moves
    /// (`AWAY`) gets [`MAX_SLACK`] bytes to grow into: it changed length once, and may again
    /// (a group's MAX of a string). `past_limit`: for an update, whose new block the table's
    /// limit does not refuse ([`Meter::take_past_limit`]).
    fn append(&mut self, state: u8, row: &[u8], past_limit: bool) -> Result<Pos> {
        let body = match state {
            AWAY => row.len() + MAX_SLACK,
            _ => row.len().max(MIN_BODY),
        };
        let size = 1 + body;
        loop {
            match self.blocks.get(self.current) {
                Some(b) if b.block.size() - b.used >= size => break,
                Some(_) if self.current + 1 < self.blocks.len() => self.current += 1,
                _ => self.add_block(size, past_limit)?,
            }
        }
        let b = &mut self.blocks[self.current];
        let pos = b.start + b.used as Pos;
        // SAFETY: the block has `size` bytes past `used` (checked above), which nothing
        // borrows (`&mut self`); they are all written here, so `used` may cover them.
        unsafe {
            let p = b.block.ptr().as_ptr().add(b.used);
            p.write(state << SLACK_BITS | (body - row.len()) as u8);
            std::ptr::copy_nonoverlapping(row.as_ptr(), p.add(1), row.len());
            p.add(1 + row.len()).write_bytes(0, body - row.len());
        }
        b.used += size;
        Ok(pos)
    }

    /// A new block after the last, holding at least `size` bytes (past the table's limit if
    /// `past_limit`); `TableFull` when positions in it would pass [`MAX_POS`].
    fn add_block(&mut self, size: usize, past_limit: bool) -> Result<()> {
        let start = self
            .blocks
            .last()
            .map_or(0, |b| b.start + b.block.size() as Pos);
        self.blocks.try_reserve(1)?;
        let index = u16::try_from(self.blocks.len()).map_err(|_| Error::TableFull)?;
        let block = match past_limit {
            // The least block that holds the row: the table is past its limit with it.
            true => self
                .meter
                .take_past_limit(size.next_power_of_two().max(MIN_BLOCK)),
            false => self.meter.take(self.growth.next_block(size), size),
        }
        .ok_or(Error::OutOfMemory)?;
        let pages = block.size() >> PAGE_BITS;
        let refused = match start + block.size() as Pos > MAX_POS + 1 {
            true => Some(Error::TableFull),
            false if block.size() % (1 << PAGE_BITS) != 0 => Some(Error::internal(
                "a block that is not a whole number of pages",
            )),
            false => self.pages.try_reserve(pages).err().map(Error::from),
        };
        if let Some(e) = refused {
            self.meter.give(block);
            return Err(e);
        }
        self.pages.extend(std::iter::repeat_n(index, pages));
        self.bytes += block.size();
        self.blocks.push(Block {
            block,
            start,
            used: 0,
        });
        self.current = self.blocks.len() - 1;
        Ok(())
    }

    /// Stores `row` (packed by `format`) and returns its position: the most recently freed
    /// home, else a new one at the end.
    pub fn insert(&mut self, row: &[u8], format: &RowFormat) -> Result<Pos> {
        if self.free_head == NONE {
            let pos = self.append(LIVE, row, false)?;
            self.tail_free = false;
            self.records += 1;
            return Ok(pos);
        }
        let pos = Pos::from(self.free_head);
        let home = self.home(pos, format)?;
        let next = word(self.body(home), 4)?;
        if fits(home.body, row.len()) {
            self.fill_home(home, LIVE, row);
        } else {
            let away = self.append(AWAY, row, false)?;
            // `append` may have added a block: `home` still names the same bytes.
            self.write_link(home, MOVED, away as u32);
        }
        self.free_head = next;
        self.freed -= 1;
        self.records += 1;
        Ok(pos)
    }

    /// Replaces the row at `pos` with `row`: where it is when it fits, else at the end, in a
    /// block the table's limit does not refuse ([`Meter::take_past_limit`]).
    pub fn update(&mut self, pos: Pos, row: &[u8], format: &RowFormat) -> Result<()> {
        let home = self.home(pos, format)?;
        match home.state {
            LIVE if fits(home.body, row.len()) => self.fill_home(home, LIVE, row),
            LIVE => {
                let away = self.append(AWAY, row, true)?;
                self.write_link(home, MOVED, away as u32);
            }
            MOVED => {
                let away = self.away_of(home, format)?;
                if fits(away.body, row.len()) {
                    self.fill_home(away, AWAY, row);
                } else {
                    let to = self.append(AWAY, row, true)?;
                    self.write_link(away, DEAD, NONE);
                    self.write_link(home, MOVED, to as u32);
                }
            }
            _ => return Err(Error::RecordDeleted),
        }
        Ok(())
    }

    /// Frees the row at `pos`; its home is the next row's.
    pub fn delete(&mut self, pos: Pos, format: &RowFormat) -> Result<()> {
        let home = self.home(pos, format)?;
        match home.state {
            LIVE => {}
            MOVED => {
                let away = self.away_of(home, format)?;
                self.write_link(away, DEAD, NONE);
            }
            _ => return Err(Error::RecordDeleted),
        }
        self.write_link(home, FREE, self.free_head);
        self.free_head = pos as u32;
        self.freed += 1;
        self.records -= 1;
        Ok(())
    }

    /// What HEAP leaves of a row it refuses as a duplicate: it took the most recently freed
    /// slot or a new one, and freed it again. Only the new slot changes anything: it is the
    /// next row's, at the end, where that row goes anyway; a scan reports it freed.
    pub fn mirror_duplicate(&mut self) {
        if self.free_head == NONE {
            self.tail_free = true;
        }
    }

    /// Where a scan goes after the home at `pos`.
    pub fn after(&self, pos: Pos, format: &RowFormat) -> Pos {
        match self.home(pos, format) {
            Ok(h) => pos + h.size(),
            Err(_) => pos + 1,
        }
    }

    /// The first home at or after `cursor` (a position or where a scan goes on) that HEAP's
    /// scan sees, a row's home or a freed one: its block and offset.
    fn visible(&self, cursor: Pos, format: &RowFormat) -> Result<Option<(usize, usize)>> {
        let mut pos = cursor;
        loop {
            let Some(i) = self.block_of(pos) else {
                return Ok(None);
            };
            let b = &self.blocks[i];
            let at = (pos - b.start) as usize;
            if i > self.current || at >= b.used {
                match self.blocks.get(i + 1) {
                    Some(n) if i < self.current => pos = n.start,
                    _ => return Ok(None),
                }
                continue;
            }
            match self.used(i)[at] >> SLACK_BITS {
                AWAY | DEAD => pos += self.home_at(i, at, format)?.size(),
                _ => return Ok(Some((i, at))),
            }
        }
    }

    fn pos_of(&self, home: Home) -> Pos {
        self.blocks[home.block].start + home.at as Pos
    }

    /// One step of HEAP's scan from `cursor`: the row it finds (`Ok`), a freed home
    /// (`RecordDeleted`) or the end (`EndOfFile`), and where it goes on. The tests' view of
    /// [`scan_with`](Self::scan_with), which the store reads rows with.
    #[cfg(test)]
    pub fn scan(&self, cursor: Pos, format: &RowFormat) -> (Step, Result<&[u8]>) {
        let mut row: &[u8] = &[];
        let (step, r) = self.scan_with(cursor, format, |rest| {
            let len = format.packed_len(rest)?;
            row = &rest[..len];
            Ok(len)
        });
        (step, r.map(|()| row))
    }

    /// One step of HEAP's scan from `cursor`, the row found read with `read` as in
    /// [`read_with`](Self::read_with) (a row in its own home is walked once): `Ok` for a row,
    /// `RecordDeleted` for a freed home, `EndOfFile` at the end, and where the scan goes on.
    pub fn scan_with<'a>(
        &'a self,
        cursor: Pos,
        format: &RowFormat,
        read: impl FnOnce(&'a [u8]) -> Result<usize>,
    ) -> (Step, Result<()>) {
        let end = Step {
            at: cursor,
            next: cursor,
        };
        let (i, at) = match self.visible(cursor, format) {
            Ok(Some(found)) => found,
            Ok(None) if self.tail_free && cursor != Pos::MAX => {
                // HEAP's freed slot at the end; nothing follows it.
                let step = Step {
                    at: cursor,
                    next: Pos::MAX,
                };
                return (step, Err(Error::RecordDeleted));
            }
            Ok(None) => return (end, Err(Error::EndOfFile)),
            Err(e) => return (end, Err(e)),
        };
        let pos = self.blocks[i].start + at as Pos;
        let bytes = self.used(i);
        if bytes[at] >> SLACK_BITS == LIVE {
            let body = read_home(bytes, at, read);
            let next = match &body {
                Ok(body) => pos + 1 + *body as Pos,
                Err(_) => self.after(pos, format),
            };
            return (Step { at: pos, next }, body.map(|_| ()));
        }
        // A freed home, or one whose row moved: its size is in its body.
        let home = match self.home_at(i, at, format) {
            Ok(h) => h,
            Err(e) => return (end, Err(e)),
        };
        let step = Step {
            at: pos,
            next: pos + home.size(),
        };
        let row = self.row_of(home, format);
        (step, row.and_then(|row| read(row).map(|_| ())))
    }

    /// The first row at or after `cursor`, in scan order.
    pub fn next_live(&self, cursor: Pos, format: &RowFormat) -> Option<Pos> {
        let mut pos = cursor;
        loop {
            let (i, at) = self.visible(pos, format).ok()??;
            let home = self.home_at(i, at, format).ok()?;
            let at = self.pos_of(home);
            if home.state != FREE {
                return Some(at);
            }
            pos = at + home.size();
        }
    }

    /// Drops every row and keeps the blocks: the next rows fill them from the first.
    pub fn clear_keeping_blocks(&mut self) {
        self.blocks.iter_mut().for_each(|b| b.used = 0);
        self.current = 0;
        self.free_head = NONE;
        self.tail_free = false;
        self.records = 0;
        self.freed = 0;
    }

    /// Drops every row and gives the blocks back.
    pub fn clear(&mut self) {
        let meter = &self.meter;
        self.blocks.drain(..).for_each(|b| meter.give(b.block));
        self.pages = Vec::new();
        self.growth = self.first_growth;
        self.clear_keeping_blocks();
        self.bytes = 0;
    }

    /// Checks the invariants; panics on a violation.
    pub fn debug_check_consistency(&self, format: &RowFormat) {
        let held: usize = self.blocks.iter().map(|b| b.block.size()).sum();
        assert_eq!(held, self.bytes, "block bytes add up");
        let mut start = 0;
        for (i, b) in self.blocks.iter().enumerate() {
            assert_eq!(b.start, start, "blocks follow one another");
            assert!(b.used <= b.block.size());
            assert!(
                i <= self.current || b.used == 0,
                "blocks past the current are empty"
            );
            start += b.block.size() as Pos;
        }
        assert!(start <= MAX_POS + 1, "positions fit an index");
        assert_eq!(
            self.pages.len() as Pos,
            start >> PAGE_BITS,
            "a page for every KiB"
        );
        for (i, b) in self.blocks.iter().enumerate() {
            assert_eq!(self.block_of(b.start), Some(i));
            assert_eq!(self.block_of(b.start + b.block.size() as Pos - 1), Some(i));
        }
        let (mut rows, mut free, mut away) = (0, Vec::new(), std::collections::HashSet::new());
        let mut moved = Vec::new();
        for i in 0..self.blocks.len() {
            let mut at = 0;
            while at < self.blocks[i].used {
                let home = self.home_at(i, at, format).expect("a well-formed home");
                let pos = self.pos_of(home);
                match home.state {
                    LIVE => rows += 1,
                    MOVED => {
                        rows += 1;
                        moved.push(self.away_of(home, format).expect("a row away"));
                    }
                    FREE => free.push(pos),
                    AWAY => assert!(away.insert(pos), "one home a row"),
                    DEAD => {}
                    _ => unreachable!(),
                }
                at += home.size() as usize;
            }
        }
        assert_eq!(rows, self.records, "rows add up");
        assert_eq!(moved.len(), away.len(), "every row away has a home");
        for a in moved {
            assert!(
                away.remove(&self.pos_of(a)),
                "a row away belongs to one home"
            );
        }
        let mut listed = Vec::new();
        let mut p = self.free_head;
        while p != NONE {
            listed.push(Pos::from(p));
            let home = self.home(Pos::from(p), format).expect("a freed home");
            assert_eq!(home.state, FREE);
            p = word(self.body(home), 4).expect("a link");
        }
        listed.sort_unstable();
        assert_eq!(listed, free, "every freed home is on the list, once");
        assert_eq!(free.len() as u64, self.freed);
    }
}

impl Drop for RowLog {
    fn drop(&mut self) {
        let meter = &self.meter;
        self.blocks.drain(..).for_each(|b| meter.give(b.block));
    }
}

/// The little-endian u32 at `at` of `bytes`.
fn word(bytes: &[u8], at: usize) -> Result<u32> {
    let b = bytes.get(at..at + 4).ok_or_else(corrupt)?;
    Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::format::{VarField, VarKind};
    use crate::rows::records::RecordStore;
    use proptest::prelude::*;

    /// `[VARCHAR(60), 1-byte length][2 fixed bytes]`
    fn format() -> RowFormat {
        RowFormat::new(
            61 + 2,
            vec![VarField {
                offset: 0,
                kind: VarKind::Varchar {
                    len_bytes: 1,
                    max: 60,
                },
            }],
        )
        .unwrap()
    }

    fn packed(v: &[u8]) -> Vec<u8> {
        let mut p = vec![v.len() as u8];
        p.extend_from_slice(v);
        p.extend_from_slice(b"ok");
        p
    }

    fn pack(f: &RowFormat, rec: &[u8]) -> Vec<u8> {
        let mut p = Vec::new();
        // SAFETY: the format has no BLOB field: no pointer is read from the record.
        unsafe { f.pack(rec, &mut p) }.unwrap();
        p
    }

    fn rows(log: &RowLog, f: &RowFormat) -> Vec<(Pos, Vec<u8>)> {
        let mut out = Vec::new();
        let mut p = 0;
        while let Some(q) = log.next_live(p, f) {
            out.push((q, log.row(q, f).unwrap().to_vec()));
            p = log.after(q, f);
        }
        out
    }

    #[test]
    fn rows_sit_back_to_back_behind_one_byte() {
        let f = format();
        let mut log = RowLog::new(20, 0, u64::MAX, Meter::unlimited());
        let a = log.insert(&packed(b"abcdefghij"), &f).unwrap();
        let b = log.insert(&packed(b"x"), &f).unwrap();
        let c = log.insert(&packed(b"klmno"), &f).unwrap();
        assert_eq!((a, b, c), (0, 1 + 13, 1 + 13 + 1 + 8));
        assert_eq!(log.row(b, &f).unwrap(), &packed(b"x")[..]);
        log.debug_check_consistency(&f);
    }

    #[test]
    fn a_row_that_grows_moves_and_keeps_its_position_and_scan_place() {
        let f = format();
        let mut log = RowLog::new(20, 0, u64::MAX, Meter::unlimited());
        let a = log.insert(&packed(b"ab"), &f).unwrap();
        let b = log.insert(&packed(b"cd"), &f).unwrap();
        log.update(a, &packed(&[b'z'; 50]), &f).unwrap();
        let away = log.row(a, &f).unwrap().as_ptr();
        log.update(a, &packed(&[b'y'; 55]), &f).unwrap();
        assert_eq!(log.row(a, &f).unwrap().as_ptr(), away, "grown in its room");
        log.update(a, &packed(&[b'w'; 20]), &f).unwrap();
        log.debug_check_consistency(&f);
        assert_eq!(
            rows(&log, &f),
            [(a, packed(&[b'w'; 20])), (b, packed(b"cd"))]
        );
        log.delete(a, &f).unwrap();
        let c = log.insert(&packed(b"e"), &f).unwrap();
        assert_eq!(c, a, "the freed home is the next row's");
        log.debug_check_consistency(&f);
    }

    #[test]
    fn a_refused_block_fails_a_write_and_not_an_update() {
        let f = format();
        let mut log = RowLog::new(20, 0, 4096, Meter::try_new(4096).unwrap());
        let mut written = Vec::new();
        let full = loop {
            let v = vec![b'a' + (written.len() % 26) as u8; 20];
            match log.insert(&packed(&v), &f) {
                Ok(p) => written.push((p, packed(&v))),
                Err(e) => break e,
            }
        };
        assert_eq!(
            full,
            Error::OutOfMemory,
            "the meter refuses the block past the limit"
        );
        assert!(log.bytes() <= 4096);
        // A freed home still takes a row that fits it.
        let (p, _) = written[3].clone();
        log.delete(p, &f).unwrap();
        assert_eq!(log.insert(&packed(b"short"), &f), Ok(p));
        // A row that must move gets its room past the limit: HEAP's updates never need any.
        log.update(p, &packed(&[b'z'; 60]), &f).unwrap();
        assert_eq!(log.row(p, &f).unwrap(), &packed(&[b'z'; 60])[..]);
        assert!(log.bytes() > 4096);
        log.debug_check_consistency(&f);
        assert_eq!(rows(&log, &f).len(), written.len());
        // The next write that needs a block finds the table full.
        let held = log.bytes();
        let refused = (0..1000).find_map(|_| log.insert(&packed(b"x"), &f).err());
        assert_eq!(refused, Some(Error::OutOfMemory));
        assert_eq!(log.bytes(), held);
        log.debug_check_consistency(&f);
    }

    #[test]
    fn a_scan_reports_freed_homes_and_the_mirrored_duplicate() {
        let f = format();
        let mut log = RowLog::new(20, 0, u64::MAX, Meter::unlimited());
        let a = log.insert(&packed(b"a"), &f).unwrap();
        let b = log.insert(&packed(b"b"), &f).unwrap();
        log.delete(a, &f).unwrap();
        log.mirror_duplicate();
        assert!(!log.needs_new_slot());
        let mut seen = Vec::new();
        let mut cursor = 0;
        loop {
            let (step, r) = log.scan(cursor, &f);
            match r {
                Err(Error::EndOfFile) => break,
                r => seen.push((step.at, r.map(<[u8]>::to_vec))),
            }
            cursor = step.next;
        }
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert_eq!(seen[0], (a, Err(Error::RecordDeleted)));
        assert_eq!(seen[1], (b, Ok(packed(b"b"))));
        log.mirror_duplicate();
        assert_eq!(log.deleted(), 1, "a freed home is there: HEAP reuses it");
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(usize),
        Update(usize, usize),
        Delete(usize),
        Duplicate,
        ClearKeepingBlocks,
        Clear,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (0usize..=60).prop_map(Op::Insert),
            3 => (any::<usize>(), 0usize..=60).prop_map(|(i, n)| Op::Update(i, n)),
            3 => any::<usize>().prop_map(Op::Delete),
            2 => Just(Op::Duplicate),
            1 => Just(Op::ClearKeepingBlocks),
            1 => Just(Op::Clear),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::testing::cases(64)))]
        /// The log against HEAP's slots (a [`RecordStore`] of the same rows): the same rows in
        /// the same scan order, freed slots reported at the same places, the same counts.
        #[test]
        fn scans_as_heaps_slots_do(ops in proptest::collection::vec(op(), 1..200)) {
            let f = format();
            let mut log = RowLog::new(20, 0, u64::MAX, Meter::unlimited());
            let mut heap = RecordStore::new(63, 0, u64::MAX, Meter::unlimited());
            // The log's position of each of HEAP's slots that holds a row.
            let mut at: std::collections::BTreeMap<Pos, Pos> = Default::default();
            let mut n = 0u8;
            let mut rec = |len: usize| {
                n = n.wrapping_add(1);
                let v = vec![b'a' + n % 26; len];
                let mut r = vec![len as u8];
                r.extend_from_slice(&v);
                r.resize(61, 0);
                r.extend_from_slice(&[n, 7]);
                r
            };
            for op in ops {
                match op {
                    Op::Insert(len) => {
                        let r = rec(len);
                        let p = pack(&f, &r);
                        let s = heap.insert(&r).unwrap();
                        at.insert(s, log.insert(&p, &f).unwrap());
                    }
                    Op::Update(i, len) if !at.is_empty() => {
                        let (&s, &l) = at.iter().nth(i % at.len()).unwrap();
                        let r = rec(len);
                        let p = pack(&f, &r);
                        heap.update(s, &r).unwrap();
                        log.update(l, &p, &f).unwrap();
                    }
                    Op::Delete(i) if !at.is_empty() => {
                        let (&s, &l) = at.iter().nth(i % at.len()).unwrap();
                        heap.delete(s).unwrap();
                        log.delete(l, &f).unwrap();
                        at.remove(&s);
                    }
                    Op::Duplicate => {
                        if heap.needs_new_slot() {
                            let s = heap.insert(&rec(0)).unwrap();
                            heap.delete(s).unwrap();
                        }
                        log.mirror_duplicate();
                    }
                    Op::ClearKeepingBlocks => {
                        heap.clear_keeping_blocks();
                        log.clear_keeping_blocks();
                        at.clear();
                    }
                    Op::Clear => {
                        heap.clear();
                        log.clear();
                        at.clear();
                    }
                    _ => {}
                }
                log.debug_check_consistency(&f);
                prop_assert_eq!(log.records(), heap.records());
                prop_assert_eq!(log.deleted(), heap.deleted());
                prop_assert_eq!(log.needs_new_slot(), heap.needs_new_slot());
                // Both scans, step by step.
                let mut cursor = 0;
                for s in 0..heap.slots() {
                    let (step, r) = log.scan(cursor, &f);
                    match heap.get(s) {
                        Some(want) => {
                            prop_assert_eq!(Some(&step.at), at.get(&s));
                            let p = pack(&f, want);
                            prop_assert_eq!(r.unwrap(), &p[..]);
                            // By position, in one walk: the record HEAP holds.
                            let mut got = vec![0; 63];
                            log.read_with(step.at, |b| f.unpack_prefix(b, &mut got, &mut Vec::new()))
                                .unwrap();
                            prop_assert_eq!(&got[..], want);
                        }
                        None => {
                            prop_assert_eq!(r.err(), Some(Error::RecordDeleted));
                            let read = log.read_with(step.at, |_| Ok(MIN_BODY));
                            prop_assert_eq!(read.err(), Some(Error::RecordDeleted));
                        }
                    }
                    cursor = step.next;
                }
                prop_assert_eq!(log.scan(cursor, &f).1.err(), Some(Error::EndOfFile));
            }
        }
    }
}
