//! Fixed-length record slots, in HEAP's order.
//!
//! A table's rows live in numbered slots of `rec_len` bytes. A new row takes the most recently
//! freed slot if there is one (a LIFO free list, as HEAP's `del_link` chain), else the next slot
//! after the last one ever used. A full scan visits slots in number order, skipping free ones, so
//! the same inserts and deletes give the same scan order as MEMORY, which the server's result
//! files depend on.

use crate::error::{Error, Result};

/// A slot number: what `position()` hands the server and `rnd_pos()` takes back.
pub type Pos = u64;

#[derive(Debug)]
pub struct RecordStore {
    rec_len: usize,
    /// Slot `i` occupies `data[i * rec_len..(i + 1) * rec_len]`.
    data: Vec<u8>,
    /// Whether each slot holds a row.
    live: Vec<bool>,
    /// Freed slots, the most recently freed last.
    free: Vec<Pos>,
    records: u64,
}

impl RecordStore {
    pub fn new(rec_len: usize) -> Self {
        RecordStore {
            rec_len,
            data: Vec::new(),
            live: Vec::new(),
            free: Vec::new(),
            records: 0,
        }
    }

    pub fn rec_len(&self) -> usize {
        self.rec_len
    }

    /// Rows stored.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Freed slots not yet reused.
    pub fn deleted(&self) -> u64 {
        self.free.len() as u64
    }

    /// Slots ever used since the last [`clear`](Self::clear): rows plus freed slots.
    pub fn slots(&self) -> u64 {
        self.live.len() as u64
    }

    /// Whether an insert would need a new slot rather than a freed one.
    pub fn needs_new_slot(&self) -> bool {
        self.free.is_empty()
    }

    /// Stores `row` and returns its slot.
    pub fn insert(&mut self, row: &[u8]) -> Result<Pos> {
        self.check_len(row)?;
        if let Some(pos) = self.free.pop() {
            let i = pos as usize;
            self.slot_mut(i).copy_from_slice(row);
            self.live[i] = true;
            self.records += 1;
            return Ok(pos);
        }
        self.data.try_reserve(self.rec_len)?;
        self.live.try_reserve(1)?;
        self.free
            .try_reserve(self.live.len() + 1 - self.free.len())?;
        self.data.extend_from_slice(row);
        self.live.push(true);
        self.records += 1;
        Ok((self.live.len() - 1) as Pos)
    }

    /// The row in slot `pos`, if it holds one.
    pub fn get(&self, pos: Pos) -> Option<&[u8]> {
        let i = usize::try_from(pos).ok()?;
        if *self.live.get(i)? {
            Some(&self.data[i * self.rec_len..(i + 1) * self.rec_len])
        } else {
            None
        }
    }

    /// Overwrites the row in slot `pos`.
    pub fn update(&mut self, pos: Pos, row: &[u8]) -> Result<()> {
        self.check_len(row)?;
        let i = self.live_index(pos)?;
        self.slot_mut(i).copy_from_slice(row);
        Ok(())
    }

    /// Frees slot `pos`; the next insert reuses it.
    pub fn delete(&mut self, pos: Pos) -> Result<()> {
        let i = self.live_index(pos)?;
        self.live[i] = false;
        // Capacity was reserved at insert, so this push cannot allocate.
        self.free.push(pos);
        self.records -= 1;
        Ok(())
    }

    /// The first slot at or after `from` that holds a row.
    pub fn next_live(&self, from: Pos) -> Option<Pos> {
        let start = usize::try_from(from).ok()?;
        self.live
            .get(start..)?
            .iter()
            .position(|&l| l)
            .map(|k| (start + k) as Pos)
    }

    /// Drops every row and frees the memory.
    pub fn clear(&mut self) {
        *self = RecordStore::new(self.rec_len);
    }

    /// Checks the invariants; panics on a violation.
    pub fn debug_check_consistency(&self) {
        assert_eq!(
            self.data.len(),
            self.live.len() * self.rec_len,
            "data covers every slot"
        );
        let live = self.live.iter().filter(|&&l| l).count() as u64;
        assert_eq!(live, self.records, "row count matches live slots");
        assert_eq!(
            live + self.free.len() as u64,
            self.slots(),
            "every slot is live or free"
        );
        let mut seen = vec![false; self.live.len()];
        for &p in &self.free {
            let i = p as usize;
            assert!(!self.live[i], "free slot {i} is not live");
            assert!(!seen[i], "slot {i} is free twice");
            seen[i] = true;
        }
    }

    fn check_len(&self, row: &[u8]) -> Result<()> {
        if row.len() == self.rec_len {
            Ok(())
        } else {
            Err(Error::WrongCommand)
        }
    }

    fn live_index(&self, pos: Pos) -> Result<usize> {
        match usize::try_from(pos) {
            Ok(i) if self.live.get(i) == Some(&true) => Ok(i),
            _ => Err(Error::RecordDeleted),
        }
    }

    fn slot_mut(&mut self, i: usize) -> &mut [u8] {
        &mut self.data[i * self.rec_len..(i + 1) * self.rec_len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn row(b: u8) -> [u8; 4] {
        [b; 4]
    }

    fn scan(s: &RecordStore) -> Vec<u8> {
        let mut out = Vec::new();
        let mut p = 0;
        while let Some(q) = s.next_live(p) {
            out.push(s.get(q).unwrap()[0]);
            p = q + 1;
        }
        out
    }

    #[test]
    fn freed_slots_are_reused_most_recent_first() {
        let mut s = RecordStore::new(4);
        for b in 1..=5 {
            s.insert(&row(b)).unwrap();
        }
        s.delete(1).unwrap();
        s.delete(3).unwrap();
        assert_eq!(s.insert(&row(9)).unwrap(), 3);
        assert_eq!(s.insert(&row(8)).unwrap(), 1);
        assert_eq!(s.insert(&row(7)).unwrap(), 5);
        assert_eq!(scan(&s), vec![1, 8, 3, 9, 5, 7]);
        s.debug_check_consistency();
    }

    #[test]
    fn wrong_length_and_dead_positions_are_errors() {
        let mut s = RecordStore::new(4);
        assert_eq!(s.insert(&[1, 2, 3]), Err(Error::WrongCommand));
        let p = s.insert(&row(1)).unwrap();
        s.delete(p).unwrap();
        assert_eq!(s.delete(p), Err(Error::RecordDeleted));
        assert_eq!(s.update(p, &row(2)), Err(Error::RecordDeleted));
        assert_eq!(s.update(99, &row(2)), Err(Error::RecordDeleted));
        assert!(s.get(p).is_none());
        s.debug_check_consistency();
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u8),
        Update(usize, u8),
        Delete(usize),
        Clear,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => any::<u8>().prop_map(Op::Insert),
            2 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Op::Update(i, b)),
            3 => any::<usize>().prop_map(Op::Delete),
            1 => Just(Op::Clear),
        ]
    }

    proptest! {
        /// The store against a model: a map from slot to row plus HEAP's reuse rule.
        #[test]
        fn matches_model(ops in proptest::collection::vec(op(), 0..200)) {
            let mut s = RecordStore::new(4);
            let mut model: BTreeMap<Pos, u8> = BTreeMap::new();
            let mut freed: Vec<Pos> = Vec::new();
            let mut next: Pos = 0;
            for op in ops {
                match op {
                    Op::Insert(b) => {
                        let want = freed.pop().unwrap_or_else(|| { next += 1; next - 1 });
                        prop_assert_eq!(s.insert(&row(b)).unwrap(), want);
                        model.insert(want, b);
                    }
                    Op::Update(i, b) if !model.is_empty() => {
                        let p = *model.keys().nth(i % model.len()).unwrap();
                        s.update(p, &row(b)).unwrap();
                        model.insert(p, b);
                    }
                    Op::Delete(i) if !model.is_empty() => {
                        let p = *model.keys().nth(i % model.len()).unwrap();
                        s.delete(p).unwrap();
                        model.remove(&p);
                        freed.push(p);
                    }
                    Op::Clear => {
                        s.clear();
                        model.clear();
                        freed.clear();
                        next = 0;
                    }
                    _ => {}
                }
                s.debug_check_consistency();
                prop_assert_eq!(s.records(), model.len() as u64);
                prop_assert_eq!(scan(&s), model.values().copied().collect::<Vec<_>>());
            }
        }
    }
}
