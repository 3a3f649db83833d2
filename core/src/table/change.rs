//! A table's updates and deletes: a row's keys moved or taken out of every index, and on a
//! duplicate every key put back.

use super::*;

impl Table {
    /// The record of row `pos` into `s.row` (its BLOBs into `s.blobs`).
    pub(super) fn old_row(&self, pos: Pos, s: &mut Scratch) -> Result<()> {
        crate::alloc::resize_default(&mut s.row, self.def.rec_len)?;
        self.store.read_into(pos, &mut s.row, &mut s.blobs)
    }

    /// Replaces row `pos`. Keys whose value changes move (to the newest place among equal
    /// keys, as in HEAP); on a duplicate every key is put back and the row is unchanged.
    pub fn update(&mut self, pos: Pos, new: &[u8]) -> Result<()> {
        if !self.store.is_packed() {
            // Rows are stored as records: when no key's bytes change (GROUP BY's counters),
            // the row is overwritten in place, without copying the old one first.
            let keys = &self.def.keys[..self.active_keys()];
            let old = self.store.record_mut(pos).ok_or(Error::RecordDeleted)?;
            if old.len() != new.len() {
                return Err(Error::WrongCommand);
            }
            let same_at = |r: &Range<usize>| match (old.get(r.clone()), new.get(r.clone())) {
                (Some(a), Some(b)) => bytes_eq(a, b),
                _ => false,
            };
            let mut unchanged = self.key_bytes.iter().all(same_at);
            if !unchanged {
                // Bytes no key compares (a VARCHAR's room past its length) may differ.
                unchanged = true;
                for k in keys {
                    if !k.same_bytes(old, new)? {
                        unchanged = false;
                        break;
                    }
                }
            }
            if unchanged {
                old.copy_from_slice(new);
                return Ok(());
            }
            return self.update_packed(pos, new, new);
        }
        full_if_refused(self.with_scratch(|t, s| {
            let mut packed = std::mem::take(&mut s.packed);
            let r = t
                .store
                .pack_plain(new, &mut packed)
                .and_then(|()| t.update_with(pos, new, &packed, s));
            s.packed = packed;
            r
        }))
    }

    /// [`update`](Self::update) with the new record already packed (see
    /// [`write_packed`](Self::write_packed)).
    pub fn update_packed(&mut self, pos: Pos, new: &[u8], packed: &[u8]) -> Result<()> {
        full_if_refused(self.with_scratch(|t, s| t.update_with(pos, new, packed, s)))
    }

    pub(super) fn update_with(
        &mut self,
        pos: Pos,
        new: &[u8],
        packed: &[u8],
        s: &mut Scratch,
    ) -> Result<()> {
        let keys = self.active_keys();
        // The old record is read for its keys only (a window function's table has none).
        if keys > 0 {
            self.old_row(pos, s)?;
        }
        // An internal table's update gets its room past the table's limit (the server moves no
        // table to disk for an update), and the table refuses its next write.
        if self.store.format().has_blobs() && !self.store.format().is_internal() {
            let old = self.store.format().blob_bytes(self.read(pos)?)? as u64;
            let new = self.store.format().blob_bytes(packed)? as u64;
            self.check_blob_room(new.saturating_sub(old))?;
        }
        let Scratch {
            row: old,
            old: old_images,
            new: new_images,
            moved,
            ..
        } = s;
        crate::alloc::resize_default(old_images, keys)?;
        crate::alloc::resize_default(new_images, keys)?;
        moved.clear();
        // All or nothing. An index reads its keys from the rows, so a row is under one key of
        // an index at a time: for each key that changes, the old entry goes first (allocating
        // nothing), then the new one comes; the row is stored last. A failure (a duplicate, or
        // memory for an entry or the row) takes the new entries out again and puts the old
        // ones back, as the newest of their key in a HASH index, as HEAP does when it puts back
        // the keys an update had moved.
        let mut failed_at = None;
        let mut added = || -> Result<()> {
            for k in 0..keys {
                // Most updates of a temporary table (GROUP BY's counters) leave every key alone.
                if self.def.keys[k].same_bytes(old, new)? {
                    continue;
                }
                let old_row = self.stored_row(old, pos)?;
                self.def.keys[k].image_of_row_into(old_row, &mut old_images[k])?;
                let new_row = self.row_of(new, packed);
                self.def.keys[k].image_of_row_into(new_row, &mut new_images[k])?;
                if old_images[k] == new_images[k] {
                    continue;
                }
                // The row's old entry has another image: it cannot be the duplicate.
                if self.is_duplicate(k, &new_images[k])? {
                    failed_at = Some(k);
                    // HEAP took the old entry out before it found the duplicate, and puts it
                    // back: a BTREE's tree is rebalanced for both (its shape gives the range
                    // estimates). Taking a node out frees one for it to come back in.
                    if self.def.keys[k].algorithm == Algorithm::Btree {
                        self.remove_key(k, &old_images[k], old, pos)?;
                        self.add_key(k, &old_images[k], old, pos, false)?;
                    }
                    return Err(Error::DuplicateKey(k));
                }
                moved.try_reserve(1)?;
                self.remove_key(k, &old_images[k], old, pos)?;
                if let Err(e) = self.add_key(k, &new_images[k], new, pos, true) {
                    self.add_key(k, &old_images[k], old, pos, false)?;
                    return Err(e);
                }
                moved.push(k);
            }
            self.store.update(pos, packed)
        };
        if let Err(e) = added() {
            for &k in moved.iter() {
                self.remove_key(k, &new_images[k], new, pos)?;
                self.add_key(k, &old_images[k], old, pos, false)?;
            }
            // HEAP takes the old entries out and, on a duplicate, puts them back: in a HASH
            // key the row is then the newest of its key, for the keys it had moved (above)
            // and the one that refused it.
            if let Some(k) = failed_at {
                self.indexes[k].make_newest(&old_images[k].bytes, pos);
            }
            return Err(e);
        }
        if let Some(a) = self
            .def
            .auto_key
            .as_ref()
            .filter(|a| moved.contains(&a.key))
        {
            let v = a.seg.auto_increment_value(new)?;
            self.auto_increment = self.auto_increment.max(v);
        }
        Ok(())
    }

    pub fn delete(&mut self, pos: Pos) -> Result<()> {
        let r = self.with_scratch(|t, s| t.delete_with(pos, s));
        self.live.set_rows(self.store.records());
        r
    }

    pub(super) fn delete_with(&mut self, pos: Pos, s: &mut Scratch) -> Result<()> {
        self.old_row(pos, s)?;
        self.fill_images(self.stored_row(&s.row, pos)?, &mut s.old)?;
        for (k, img) in s.old.iter().enumerate() {
            self.remove_key(k, img, &s.row, pos)?;
        }
        self.store.delete(pos)?;
        self.key_version += 1;
        Ok(())
    }
}
