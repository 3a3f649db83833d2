//! A table's writes: a row into its store and every index, HEAP's "table is full" decided at
//! HEAP's row or at the table's real bytes, and a duplicate key undone as HEAP undoes it.

use super::*;

impl Table {
    /// Adds a row; `TableFull` where HEAP would say so: when the row needs a new HEAP block
    /// and the table is already past its row count or its memory limit. A duplicate key gives
    /// `DuplicateKey` with the first key (in key order) that has one.
    #[inline]
    pub fn write(&mut self, row: &[u8]) -> Result<Pos> {
        if !self.store.is_packed() {
            return self.write_packed(row, row);
        }
        let r = self.with_scratch(|t, s| {
            t.store.pack_plain(row, &mut s.packed)?;
            if t.def.keys.is_empty() {
                return t.write_keyless(&s.packed);
            }
            t.write_with(row, &s.packed, &mut s.new)
        });
        self.written(r)
    }

    /// A write's result, the row count published ([`Live`]), a refused block made a table
    /// that is full.
    #[inline(always)]
    pub(super) fn written(&self, r: Result<Pos>) -> Result<Pos> {
        self.live.set_rows(self.store.records());
        full_if_refused(r)
    }

    /// [`write`](Self::write) of a record already packed (by [`RowFormat::pack`], which the
    /// caller runs when the record has BLOBs; `packed` is `row` when rows are not packed).
    #[inline(always)]
    pub fn write_packed(&mut self, row: &[u8], packed: &[u8]) -> Result<Pos> {
        let r = if self.def.keys.is_empty() {
            self.write_keyless(packed)
        } else {
            self.with_scratch(|t, s| t.write_with(row, packed, &mut s.new))
        };
        self.written(r)
    }

    /// A write to a table without keys (information_schema's tables): no image, no duplicate,
    /// no scratch buffer; inline in the handler's write_row.
    #[inline(always)]
    pub(super) fn write_keyless(&mut self, packed: &[u8]) -> Result<Pos> {
        let (_, new_block) = self.room_for(packed)?;
        let pos = insert_row(&mut self.store, &mut self.ledger, packed, new_block)?;
        self.key_version += 1;
        Ok(pos)
    }

    /// BLOB bytes count against the memory limit (HEAP has none: its row count and blocks
    /// decide alone for tables without them).
    pub(super) fn check_blob_room(&self, adding: u64) -> Result<()> {
        if self.def.limit_by == LimitBy::Heap
            && adding > 0
            && self.ledger.bytes() + self.index_length() + self.store.blob_bytes() + adding
                >= self.def.memory_limit()
        {
            return Err(Error::TableFull);
        }
        Ok(())
    }

    /// Whether `packed` may be added: the rows stored, and whether it starts a HEAP block;
    /// `TableFull` as [`write`](Self::write) says.
    #[inline(always)]
    pub(super) fn room_for(&self, packed: &[u8]) -> Result<(u64, bool)> {
        if self.store.format().has_blobs() {
            self.check_blob_room(self.store.format().blob_bytes(packed)? as u64)?;
        }
        let count = self.store.records();
        let new_block = self.store.needs_new_slot() && self.ledger.starts_block(count);
        if new_block && self.full_at(count) {
            return Err(Error::TableFull);
        }
        Ok((count, new_block))
    }

    pub(super) fn write_with(
        &mut self,
        row: &[u8],
        packed: &[u8],
        images: &mut Vec<Image>,
    ) -> Result<Pos> {
        let (count, new_block) = self.room_for(packed)?;
        self.fill_images(self.row_of(row, packed), images)?;
        if let Some(r) = self.write_one_unique_hash(row, packed, &images[..], count, new_block) {
            return r;
        }
        self.write_general(row, packed, images, count, new_block)
    }

    /// Whether a row that needs a new HEAP block, with `count` rows stored, finds the table
    /// full: past its row count, or under [`LimitBy::Heap`] past the memory limit by HEAP's
    /// ledger. (Not cold: every table's first row asks.)
    #[inline]
    pub(super) fn full_at(&self, count: u64) -> bool {
        let past_rows = self.row_limit != 0 && count > self.row_limit;
        past_rows
            || (self.def.limit_by == LimitBy::Heap
                && self.ledger.bytes() + self.index_length() >= self.def.memory_limit())
    }

    /// [`write_with`](Self::write_with) for every other table (more keys, BTREE keys,
    /// duplicates allowed, AUTO_INCREMENT): out of line, so that the usual path stays short.
    #[inline(never)]
    pub(super) fn write_general(
        &mut self,
        row: &[u8],
        packed: &[u8],
        images: &[Image],
        count: u64,
        new_block: bool,
    ) -> Result<Pos> {
        // A duplicate (DISTINCT's and UNION's every repeated row) is found before anything
        // changes. HEAP finds it after taking a slot and the hash entries of the keys up to
        // that one; what that leaves behind (a free slot, the entries) is mirrored.
        for (k, img) in images.iter().enumerate() {
            if self.is_duplicate(k, img)? {
                return self.mirror_duplicate(k, packed, count, new_block);
            }
        }
        let pos = insert_row(&mut self.store, &mut self.ledger, packed, new_block)?;
        for (k, img) in images.iter().enumerate() {
            if self.def.keys[k].algorithm == Algorithm::Hash {
                self.index_ledgers[k].take_hash_entry(count);
            }
            if let Err(e) = self.add_key(k, img, row, pos, true) {
                for (j, img) in images[..k].iter().enumerate().rev() {
                    self.remove_key(j, img, row, pos)?;
                }
                self.store.delete(pos)?;
                return Err(e);
            }
        }
        if let Some(a) = self
            .def
            .auto_key
            .as_ref()
            .filter(|a| a.key < self.active_keys())
        {
            let v = a.seg.auto_increment_value(row)?;
            self.auto_increment = self.auto_increment.max(v);
        }
        self.key_version += 1;
        Ok(pos)
    }

    /// [`write_with`](Self::write_with) for the usual temporary table (GROUP BY's, DISTINCT's,
    /// UNION's): one HASH key that refuses the row's image if it is there, so one probe both
    /// finds a duplicate and places the new row. None: the table is not of that kind.
    pub(super) fn write_one_unique_hash(
        &mut self,
        row: &[u8],
        packed: &[u8],
        images: &[Image],
        count: u64,
        new_block: bool,
    ) -> Option<Result<Pos>> {
        let [img] = images else {
            return None;
        };
        if self.def.auto_key.is_some() || !self.checks_duplicates(0, img) {
            return None;
        }
        let Index::Hash(hash) = &mut self.indexes[0] else {
            return None;
        };
        let rows = row_keys(&self.store, &self.def, 0).for_record(row);
        let vacancy = hash.vacancy(&img.bytes, &rows);
        let placed = vacancy.and_then(|vacancy| {
            let Some(vacancy) = vacancy else {
                return Ok(None);
            };
            let pos = insert_row(&mut self.store, &mut self.ledger, packed, new_block)?;
            self.index_ledgers[0].take_hash_entry(count);
            // The row is stored: the index takes it (only a position past what an index holds
            // is refused, and then the row goes again).
            match hash.fill_vacancy(vacancy, pos) {
                Ok(()) => Ok(Some(pos)),
                Err(e) => {
                    self.store.delete(pos)?;
                    Err(e)
                }
            }
        });
        Some(match placed {
            Ok(Some(pos)) => {
                self.key_version += 1;
                Ok(pos)
            }
            Ok(None) => self.mirror_duplicate(0, packed, count, new_block),
            Err(e) => Err(e),
        })
    }

    /// What HEAP leaves behind when key `k` refuses a row: the hash entries of the keys up to
    /// `k` and a slot it took and freed (see [`write_with`](Self::write_with)).
    pub(super) fn mirror_duplicate(
        &mut self,
        k: usize,
        packed: &[u8],
        count: u64,
        new_block: bool,
    ) -> Result<Pos> {
        for j in 0..=k {
            if self.def.keys[j].algorithm == Algorithm::Hash {
                self.index_ledgers[j].take_hash_entry(count);
            }
        }
        if self.store.needs_new_slot() {
            self.store.mirror_duplicate(packed)?;
            if new_block {
                self.ledger.add_block();
            }
        }
        Err(Error::DuplicateKey(k))
    }
}
