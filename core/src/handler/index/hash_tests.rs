use super::super::tests::{internal, write};
use super::*;
use crate::testing::{counters_lock, rec, HASH, REC_LEN};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::testing::cases(128)))]
    /// Rows written (and some deleted) over a few keys; then a scan of each key, deleting
    /// some rows as it reaches them, gives every row of the key once, newest first, and
    /// leaves exactly the rows it did not delete.
    #[test]
    fn a_hash_chain_scan_gives_each_row_once_newest_first_deleting_as_it_goes(
        rows in proptest::collection::vec((0u8..3, any::<bool>()), 0..60),
        deletes in proptest::collection::vec(any::<bool>(), 60),
    ) {
        let _g = counters_lock();
        let mut h = internal(false);
        let mut out = [0u8; REC_LEN];
        // The rows of each key, oldest first.
        let mut model: Vec<Vec<Pos>> = vec![Vec::new(); 3];
        for (i, &(k, delete)) in rows.iter().enumerate() {
            write(&mut h, &rec(Some(i as i32), k, k)).unwrap();
            // Its position: the newest row of its key.
            let key = [k, k];
            h.index_read_map(&mut out, HASH, 3, None, |n| Ok(&key[..n])).unwrap();
            prop_assert_eq!(out[1..5].to_vec(), (i as i32).to_le_bytes().to_vec());
            let p = h.position();
            model[usize::from(k)].push(p);
            if delete {
                h.delete_row().unwrap();
                model[usize::from(k)].pop();
            }
        }
        let mut d = deletes.iter().cycle();
        for k in 0..3u8 {
            let key = [k, k];
            let want: Vec<Pos> = model[usize::from(k)].iter().rev().copied().collect();
            let mut seen = Vec::new();
            let mut kept = Vec::new();
            let mut r = h.index_read_map(&mut out, HASH, 3, None, |n| Ok(&key[..n]));
            while r.is_ok() {
                prop_assert_eq!(out[5..].to_vec(), key.to_vec());
                let p = h.position();
                seen.push(p);
                if *d.next().unwrap() {
                    h.delete_row().unwrap();
                } else {
                    kept.push(p);
                }
                r = h.index_step(&mut out, true);
            }
            let none = if want.is_empty() { Error::KeyNotFound } else { Error::EndOfFile };
            prop_assert_eq!(r, Err(none));
            prop_assert_eq!(&seen, &want);
            // What is left: the rows not deleted, still newest first.
            let mut left = Vec::new();
            let mut r = h.index_read_map(&mut out, HASH, 3, None, |n| Ok(&key[..n]));
            while r.is_ok() {
                left.push(h.position());
                r = h.index_step(&mut out, true);
            }
            prop_assert_eq!(left, kept);
        }
        h.with_table(|t| {
            t.debug_check_consistency();
            Ok(())
        })
        .unwrap();
        h.close();
    }
}
