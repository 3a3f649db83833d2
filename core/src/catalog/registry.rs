//! Tables shared between connections by name, as MEMORY shares them.
//!
//! A table lives from CREATE (or from the first open after a restart) until DROP. Dropping a
//! table that handlers still have open removes the name at once; the handlers keep their
//! `Arc` and the memory goes with the last of them, as HEAP's `delete_on_close`.

use crate::alloc::{try_arc, try_string};
use crate::error::{Error, Result};
use std::collections::hash_map::DefaultHasher;
use std::hash::BuildHasherDefault;
use std::sync::{Arc, Mutex, MutexGuard};

/// The tables by name. A hash map, whose room for one more entry is asked for (and may be
/// refused) before an insert, which then cannot fail for memory.
type Map<S> = hashbrown::HashMap<String, Arc<S>, BuildHasherDefault<DefaultHasher>>;

#[derive(Debug)]
pub struct Registry<S> {
    tables: Mutex<Map<S>>,
}

impl<S> Default for Registry<S> {
    fn default() -> Self {
        Registry::new()
    }
}

impl<S> Registry<S> {
    pub const fn new() -> Self {
        Registry {
            tables: Mutex::new(Map::with_hasher(BuildHasherDefault::new())),
        }
    }

    fn map(&self) -> MutexGuard<'_, Map<S>> {
        // A panic while holding the lock cannot leave the map half-updated (each operation is
        // one map call), so a poisoned lock is still consistent.
        self.tables.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds `s` under `name` (replacing a table of that name), with every allocation asked
    /// for first.
    fn insert(map: &mut Map<S>, name: &str, s: S) -> Result<Arc<S>> {
        let key = try_string(name)?;
        map.try_reserve(1)?;
        let s = try_arc(s)?;
        map.insert(key, Arc::clone(&s));
        Ok(s)
    }

    /// CREATE TABLE: a table nobody has open is replaced (HEAP frees an unopened share of the
    /// same name); one that is open is kept. Returns the table and whether it is new.
    pub fn create(&self, name: &str, make: impl FnOnce() -> Result<S>) -> Result<(Arc<S>, bool)> {
        let mut map = self.map();
        if let Some(s) = map.get(name) {
            if Arc::strong_count(s) > 1 {
                return Ok((Arc::clone(s), false));
            }
        }
        let s = Self::insert(&mut map, name, make()?)?;
        Ok((s, true))
    }

    /// Open: the table of that name, created by `make` when it does not exist (after a
    /// restart the definition outlives the rows). Returns the table and whether it is new.
    pub fn open(&self, name: &str, make: impl FnOnce() -> Result<S>) -> Result<(Arc<S>, bool)> {
        let mut map = self.map();
        if let Some(s) = map.get(name) {
            return Ok((Arc::clone(s), false));
        }
        let s = Self::insert(&mut map, name, make()?)?;
        Ok((s, true))
    }

    pub fn get(&self, name: &str) -> Option<Arc<S>> {
        self.map().get(name).cloned()
    }

    /// DROP TABLE: `NoSuchTable` when there is none of that name.
    pub fn drop_table(&self, name: &str) -> Result<()> {
        self.map()
            .remove(name)
            .map(|_| ())
            .ok_or(Error::NoSuchTable)
    }

    /// RENAME TABLE: as HEAP, a missing source is not an error (nothing to move). Out of
    /// memory for the new name, the table keeps its old one.
    pub fn rename(&self, from: &str, to: &str) -> Result<()> {
        let mut map = self.map();
        if !map.contains_key(from) {
            return Ok(());
        }
        let key = try_string(to)?;
        map.try_reserve(1)?;
        if let Some(s) = map.remove(from) {
            map.insert(key, s);
        }
        Ok(())
    }

    /// Whether a table of that name exists, or one whose name is `name` followed by `sep`
    /// (the partitions of a partitioned table are named `<table>#P#<partition>`).
    pub fn contains_or_parts(&self, name: &str, sep: &str) -> bool {
        let map = self.map();
        map.contains_key(name)
            || map.keys().any(|k| {
                k.strip_prefix(name)
                    .is_some_and(|rest| rest.starts_with(sep))
            })
    }

    /// How many tables satisfy `f`.
    pub fn count_where(&self, f: impl Fn(&S) -> bool) -> usize {
        self.map().values().filter(|s| f(s)).count()
    }

    pub fn len(&self) -> usize {
        self.map().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every table (plugin unload).
    pub fn clear(&self) {
        // The map's own memory too: the plugin's statics outlive it (see
        // `alloc::cache::BlockCache::release_all`).
        *self.map() = Map::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_count_as_their_table() {
        let r: Registry<u8> = Registry::new();
        r.open("./test/t1#P#p0", || Ok(0)).unwrap();
        r.open("./test/t10", || Ok(0)).unwrap();
        assert!(r.contains_or_parts("./test/t1", "#P#"));
        assert!(r.contains_or_parts("./test/t10", "#P#"));
        assert!(!r.contains_or_parts("./test/t", "#P#"));
        assert!(!r.contains_or_parts("./test/t2", "#P#"));
    }

    #[test]
    fn create_open_drop_rename() {
        let r: Registry<u32> = Registry::new();
        assert_eq!(r.drop_table("a"), Err(Error::NoSuchTable));
        let (a, new) = r.create("a", || Ok(1)).unwrap();
        assert!(new);
        // Open while someone holds it: the same table, not replaced by create.
        let (a2, new) = r.create("a", || Ok(2)).unwrap();
        assert!(!new);
        assert!(Arc::ptr_eq(&a, &a2));
        drop((a, a2));
        // Nobody holds it: create replaces it.
        let (b, new) = r.create("a", || Ok(3)).unwrap();
        assert!(new);
        assert_eq!(*b, 3);
        r.rename("a", "b").unwrap();
        r.rename("missing", "c").unwrap();
        assert!(r.get("a").is_none());
        assert_eq!(*r.open("b", || Ok(9)).unwrap().0, 3);
        let (c, new) = r.open("c", || Ok(4)).unwrap();
        assert!(new);
        assert_eq!(*c, 4);
        r.drop_table("b").unwrap();
        // Dropped while open: the holder keeps its table.
        assert_eq!(*b, 3);
        assert_eq!(r.len(), 1);
    }
}
