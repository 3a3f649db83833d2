use super::*;
use crate::testing::{self, counters_lock, rec, BTREE, HASH, REC_LEN, UNIQUE_HASH};

/// A handler on a new internal table that is never kept (no definition key).
/// `find_unique_row` on the test table, which has no BLOB columns.
pub(crate) fn find_unique(h: &mut Handler<()>, record: &mut [u8], index: usize) -> Result<bool> {
    // SAFETY: the test table has no BLOB columns: nothing in the record is followed.
    unsafe { h.find_unique_row(record, index) }
}

pub(crate) fn internal(tmp_table: bool) -> Handler<()> {
    let mut h = Handler::default();
    h.open_internal(None, tmp_table, ("#sql-test", 1), || {
        Ok(testing::table(tmp_table))
    })
    .unwrap();
    h
}

pub(crate) fn write(h: &mut Handler<()>, r: &[u8]) -> Result<()> {
    // SAFETY: the table has no BLOB columns.
    unsafe { h.write_row(r) }
}

pub(crate) fn update(h: &mut Handler<()>, r: &[u8]) -> Result<()> {
    // SAFETY: the table has no BLOB columns.
    unsafe { h.update_row(r) }
}

/// Where the internal table a handler has open lives (the same table again when equal).
fn internal_addr(h: &Handler<()>) -> *const Internal {
    match &h.open {
        Some(Open::Internal(t)) => &**t,
        _ => panic!("no internal table open"),
    }
}

fn is_internal(r: Result<impl std::fmt::Debug>) -> bool {
    matches!(r, Err(Error::Internal(_)))
}

#[test]
fn rows_are_written_scanned_positioned_changed_and_deleted() {
    let _g = counters_lock();
    let mut h = internal(false);
    assert_eq!(h.rec_len(), REC_LEN);
    assert!(h.lock().is_none(), "an internal table has no server lock");
    for i in 0..4 {
        write(&mut h, &rec(Some(i), i as u8, 0)).unwrap();
    }
    assert_eq!(h.records(), Ok(4));
    let mut out = [0u8; REC_LEN];
    // A short buffer is refused.
    assert_eq!(write(&mut h, &[0u8; REC_LEN - 1]), Err(Error::WrongCommand));

    // No current row yet: nothing to change, delete or remember.
    assert_eq!(h.position(), NO_ROW);
    assert_eq!(
        update(&mut h, &rec(Some(9), 9, 9)),
        Err(Error::WrongCommand)
    );
    assert_eq!(h.delete_row(), Err(Error::WrongCommand));
    assert_eq!(h.remember_rnd_pos(), Err(Error::WrongCommand));
    assert_eq!(h.restart_rnd_next(&mut out), Err(Error::WrongCommand));

    // Row 1 by position, deleted.
    h.rnd_pos(&mut out, 1).unwrap();
    assert_eq!(out[..], rec(Some(1), 1, 0)[..]);
    assert_eq!(h.position(), 1);
    h.delete_row().unwrap();
    assert_eq!(h.records(), Ok(3));

    // A full scan reports the freed slot and goes on past it.
    h.rnd_init().unwrap();
    assert_eq!(h.position(), NO_ROW, "rnd_init forgets the current row");
    h.rnd_next(&mut out).unwrap();
    assert_eq!((out.to_vec(), h.position()), (rec(Some(0), 0, 0), 0));
    assert_eq!(h.rnd_next(&mut out), Err(Error::RecordDeleted));
    assert_eq!(h.position(), NO_ROW, "a freed slot is no current row");
    assert_eq!(
        update(&mut h, &rec(Some(9), 9, 9)),
        Err(Error::WrongCommand)
    );
    h.rnd_next(&mut out).unwrap();
    assert_eq!((out.to_vec(), h.position()), (rec(Some(2), 2, 0), 2));
    h.remember_rnd_pos().unwrap();
    h.rnd_next(&mut out).unwrap();
    assert_eq!((out.to_vec(), h.position()), (rec(Some(3), 3, 0), 3));
    assert_eq!(h.rnd_next(&mut out), Err(Error::EndOfFile));
    assert_eq!(
        h.rnd_next(&mut out),
        Err(Error::EndOfFile),
        "and stays there"
    );
    assert_eq!(h.position(), NO_ROW);

    // Back to the remembered row; the scan goes on after it.
    h.restart_rnd_next(&mut out).unwrap();
    assert_eq!((out.to_vec(), h.position()), (rec(Some(2), 2, 0), 2));
    h.rnd_next(&mut out).unwrap();
    assert_eq!(h.position(), 3);

    // position / rnd_pos round trip, and the null position.
    let p = h.position();
    h.rnd_pos(&mut out, 0).unwrap();
    h.rnd_pos(&mut out, p).unwrap();
    assert_eq!((out.to_vec(), h.position()), (rec(Some(3), 3, 0), 3));
    assert_eq!(h.rnd_pos(&mut out, NO_ROW), Err(Error::EndOfFile));
    assert_eq!(h.position(), NO_ROW);
    assert_eq!(h.rnd_pos(&mut out, 1), Err(Error::RecordDeleted));
    assert_eq!(
        h.position(),
        NO_ROW,
        "a failed rnd_pos leaves no current row"
    );

    // The current row changes.
    h.rnd_pos(&mut out, 3).unwrap();
    update(&mut h, &rec(Some(30), 3, 1)).unwrap();
    h.rnd_pos(&mut out, 3).unwrap();
    assert_eq!(out[..], rec(Some(30), 3, 1)[..]);
    assert_eq!(
        update(&mut h, &rec(Some(30), 3, 1)[..REC_LEN - 1]),
        Err(Error::WrongCommand),
        "a short buffer"
    );
    h.with_table(|t| {
        t.debug_check_consistency();
        Ok(())
    })
    .unwrap();
    h.close();
}

#[test]
fn a_duplicate_key_is_reported_by_info() {
    let _g = counters_lock();
    let mut h = internal(false);
    let mut rpk = [0u64; 3];
    assert_eq!(h.info(&mut rpk).unwrap().errkey, 0);
    write(&mut h, &rec(Some(1), 1, 1)).unwrap();
    write(&mut h, &rec(Some(2), 2, 2)).unwrap();
    assert_eq!(
        write(&mut h, &rec(Some(1), 5, 5)),
        Err(Error::DuplicateKey(UNIQUE_HASH))
    );
    assert_eq!(h.info(&mut rpk).unwrap().errkey, UNIQUE_HASH as i32);
    assert_eq!(h.records(), Ok(2));
    // An update to a taken value: refused, the row unchanged.
    let mut out = [0u8; REC_LEN];
    h.rnd_pos(&mut out, 1).unwrap();
    assert_eq!(
        update(&mut h, &rec(Some(1), 2, 2)),
        Err(Error::DuplicateKey(UNIQUE_HASH))
    );
    h.rnd_pos(&mut out, 1).unwrap();
    assert_eq!(out[..], rec(Some(2), 2, 2)[..]);
    // Every key unique: the BTREE key (key 0) now refuses an equal (b, c).
    h.set_all_keys_unique(true).unwrap();
    assert_eq!(
        write(&mut h, &rec(Some(3), 2, 2)),
        Err(Error::DuplicateKey(BTREE))
    );
    assert_eq!(h.info(&mut rpk).unwrap().errkey, BTREE as i32);
    h.set_all_keys_unique(false).unwrap();
    write(&mut h, &rec(Some(3), 2, 2)).unwrap();
    h.close();
}

#[test]
fn delete_all_rows_forgets_the_scan_and_the_current_row() {
    let _g = counters_lock();
    let mut h = internal(false);
    for i in 0..3 {
        write(&mut h, &rec(Some(i), 1, 1)).unwrap();
    }
    let mut out = [0u8; REC_LEN];
    h.index_read_map(&mut out, BTREE, 3, Some(crate::index::Find::Exact), |n| {
        Ok(&[1u8, 1][..n])
    })
    .unwrap();
    assert_ne!(h.position(), NO_ROW);
    assert!(matches!(h.cursor, Cursor::Btree { .. }));
    h.delete_all_rows().unwrap();
    assert_eq!(h.position(), NO_ROW);
    assert!(matches!(h.cursor, Cursor::None));
    assert_eq!(h.delete_row(), Err(Error::WrongCommand));
    assert_eq!(h.index_step(&mut out, true), Err(Error::EndOfFile));
    assert_eq!(h.records(), Ok(0));
    // New rows are not found by the forgotten scan, but by a new one.
    write(&mut h, &rec(Some(7), 1, 1)).unwrap();
    assert_eq!(h.index_step(&mut out, true), Err(Error::EndOfFile));
    h.rnd_init().unwrap();
    h.rnd_next(&mut out).unwrap();
    assert_eq!(out[..], rec(Some(7), 1, 1)[..]);
    h.close();
}

#[test]
fn statistics_refresh_once_a_tenth_of_the_rows_changed() {
    let _g = counters_lock();
    let mut h = internal(false);
    let mut rpk = [99u64; 3];
    let i = h.info(&mut rpk).unwrap();
    assert!(i.key_stats_updated, "the first info refreshes");
    assert_eq!(i.stats.records, 0);
    assert_eq!(rpk[BTREE], 0, "BTREE keys are left alone");
    assert_eq!(rpk[UNIQUE_HASH], 1);
    assert_eq!(rpk[HASH], 2);
    rpk = [99; 3];
    assert!(!h.info(&mut rpk).unwrap().key_stats_updated);
    assert_eq!(rpk, [99; 3], "not refreshed: not written");
    assert_eq!(h.key_stats_due(), Ok(false));

    for i in 0..30 {
        write(&mut h, &rec(Some(i), (i % 3) as u8, 0)).unwrap();
    }
    let i = h.info(&mut rpk).unwrap();
    assert!(i.key_stats_updated);
    assert_eq!(i.stats.records, 30);
    assert_eq!(rpk[UNIQUE_HASH], 1);
    assert!(rpk[HASH] >= 2, "{rpk:?}");
    assert_eq!(h.rec_per_key[HASH], Some(rpk[HASH]));
    assert_eq!(h.stats_records, 30);

    // Three changes of 30 rows are not more than a tenth; the fourth is.
    let mut out = [0u8; REC_LEN];
    for n in 0..4 {
        assert_eq!(h.key_stats_due(), Ok(false), "after {n} changes");
        h.rnd_pos(&mut out, n).unwrap();
        update(&mut h, &rec(Some(100 + n as i32), 0, 1)).unwrap();
    }
    assert_eq!(h.key_stats_due(), Ok(true));
    rpk = [99; 3];
    assert!(h.info(&mut rpk).unwrap().key_stats_updated);
    assert_eq!(rpk[UNIQUE_HASH], 1);
    assert!(!h.info(&mut rpk).unwrap().key_stats_updated);

    // Deletes count too, on a table that is not temporary.
    for n in 4..7 {
        h.rnd_pos(&mut out, n).unwrap();
        h.delete_row().unwrap();
    }
    // Three of 27 rows: 30 > 27.
    assert_eq!(h.key_stats_due(), Ok(true));
    h.info(&mut rpk).unwrap();
    h.delete_all_rows().unwrap();
    assert_eq!(
        h.key_stats_due(),
        Ok(true),
        "emptying asks for new statistics"
    );
    h.close();
}

#[test]
fn deletes_on_a_temporary_table_do_not_count_towards_statistics() {
    let _g = counters_lock();
    let mut h = internal(true);
    for i in 0..30 {
        write(&mut h, &rec(Some(i), 0, 0)).unwrap();
    }
    let mut rpk = [0u64; 3];
    assert!(h.info(&mut rpk).unwrap().key_stats_updated);
    let mut out = [0u8; REC_LEN];
    for n in 0..20 {
        h.rnd_pos(&mut out, n).unwrap();
        h.delete_row().unwrap();
    }
    assert_eq!(h.records(), Ok(10));
    assert_eq!(h.key_stats_due(), Ok(false));
    h.delete_all_rows().unwrap();
    assert_eq!(h.key_stats_due(), Ok(false), "nor does emptying it");
    // Writes do.
    write(&mut h, &rec(Some(1), 0, 0)).unwrap();
    assert_eq!(h.key_stats_due(), Ok(true));
    h.close();
}

#[test]
fn a_handler_scan_sees_changes_made_through_another_handler() {
    let _g = counters_lock();
    let live = status::get(Counter::TablesLive);
    let share = Arc::new(Share::new(testing::table(false), (), false));
    let (mut a, mut b) = (Handler::<()>::default(), Handler::<()>::default());
    a.open_shared(share.clone(), false).unwrap();
    b.open_shared(share.clone(), false).unwrap();
    assert_eq!(a.lock(), Some(&()));
    assert_eq!(status::get(Counter::TablesLive), live + 1);
    let rows = status::get(Counter::RowsWritten);
    for i in 0..3 {
        write(&mut b, &rec(Some(i), 1, i as u8)).unwrap();
    }
    assert_eq!(
        status::get(Counter::RowsWritten),
        rows + 3,
        "a named table's rows count as they are written"
    );
    let mut out = [0u8; REC_LEN];

    // The index scan.
    a.index_edge(&mut out, BTREE, true).unwrap();
    assert_eq!(a.can_continue_handler_scan(HandlerScan::Index), Ok(()));
    a.index_step(&mut out, true).unwrap();
    assert_eq!(a.can_continue_handler_scan(HandlerScan::Index), Ok(()));
    write(&mut b, &rec(Some(10), 0, 0)).unwrap();
    assert_eq!(
        a.can_continue_handler_scan(HandlerScan::Index),
        Err(Error::RecordChanged)
    );
    assert_eq!(a.can_continue_handler_scan(HandlerScan::Other), Ok(()));
    // Positioned again: it continues, until a delete.
    a.index_read_map(&mut out, BTREE, 1, Some(crate::index::Find::Exact), |n| {
        Ok(&[1u8, 0][..n])
    })
    .unwrap();
    assert_eq!(a.can_continue_handler_scan(HandlerScan::Index), Ok(()));
    // An update that changes no key does not stop it (as HEAP: no key_version change).
    b.rnd_pos(&mut out, 1).unwrap();
    update(&mut b, &out.clone()).unwrap();
    assert_eq!(a.can_continue_handler_scan(HandlerScan::Index), Ok(()));
    b.rnd_pos(&mut out, 3).unwrap();
    b.delete_row().unwrap();
    assert_eq!(
        a.can_continue_handler_scan(HandlerScan::Index),
        Err(Error::RecordChanged)
    );

    // The full scan: rows written or deleted do not stop it, emptying the table does.
    a.rnd_init().unwrap();
    a.rnd_next(&mut out).unwrap();
    write(&mut b, &rec(Some(11), 0, 0)).unwrap();
    b.rnd_pos(&mut out, 0).unwrap();
    b.delete_row().unwrap();
    assert_eq!(a.can_continue_handler_scan(HandlerScan::Full), Ok(()));
    b.delete_all_rows().unwrap();
    assert_eq!(
        a.can_continue_handler_scan(HandlerScan::Full),
        Err(Error::RecordChanged)
    );
    a.rnd_init().unwrap();
    assert_eq!(a.can_continue_handler_scan(HandlerScan::Full), Ok(()));

    a.close();
    b.close();
    drop((a, b));
    assert_eq!(Arc::strong_count(&share), 1, "the handlers let go of it");
    drop(share);
    assert_eq!(status::get(Counter::TablesLive), live);
}

/// HEAP 10.11's `heap_update` ends with `if (key_changed) share->key_version++`, but
/// nothing in it sets `key_changed`: an UPDATE, even one that moves a key, leaves
/// `key_version` alone, and `HANDLER ... READ idx NEXT` after another connection's UPDATE
/// goes on. rheap's does the same (only writes, deletes and clears change it).
#[test]
fn an_update_that_moves_a_key_lets_a_handler_index_scan_go_on_as_heap() {
    let _g = counters_lock();
    let share = Arc::new(Share::new(testing::table(false), (), false));
    let (mut a, mut b) = (Handler::<()>::default(), Handler::<()>::default());
    a.open_shared(share.clone(), false).unwrap();
    b.open_shared(share, false).unwrap();
    for i in 0..3 {
        write(&mut b, &rec(Some(i), 1, i as u8)).unwrap();
    }
    let mut out = [0u8; REC_LEN];
    a.index_edge(&mut out, BTREE, true).unwrap();
    b.rnd_pos(&mut out, 2).unwrap();
    update(&mut b, &rec(Some(2), 0, 0)).unwrap();
    assert_eq!(a.can_continue_handler_scan(HandlerScan::Index), Ok(()));
}

#[test]
fn a_closed_internal_table_is_kept_and_serves_an_equal_definition() {
    let _g = counters_lock();
    let key = testing::shape_of("kept-table", 1);
    let other = testing::shape_of("kept-table", 2);
    let live = recycle::counter(Counter::TablesLive);
    let rows = recycle::counter(Counter::RowsWritten);
    let reused = status::get(Counter::InternalTablesReused);
    let created = status::get(Counter::InternalTablesCreated);
    let builds = std::cell::Cell::new(0);
    let build = || {
        builds.set(builds.get() + 1);
        Ok(testing::table(true))
    };

    let mut h = Handler::<()>::default();
    h.open_internal(Some(key.clone()), true, ("#sql-test", 1), build)
        .unwrap();
    assert_eq!(builds.get(), 1);
    assert_eq!(recycle::counter(Counter::TablesLive), live + 1);
    assert_eq!(status::get(Counter::InternalTablesCreated), created + 1);
    for i in 0..3 {
        write(&mut h, &rec(Some(i), 0, 0)).unwrap();
    }
    assert_eq!(
        recycle::counter(Counter::RowsWritten),
        rows,
        "an internal table's rows are counted when it closes"
    );
    let mut rpk = [0u64; 3];
    h.info(&mut rpk).unwrap();
    let first = internal_addr(&h);
    // A lookup makes room in the handler's key buffer: it is left with the table.
    let mut r = rec(Some(1), 0, 0);
    assert_eq!(find_unique(&mut h, &mut r, UNIQUE_HASH), Ok(true));
    let room = h.key.bytes.capacity();
    assert!(room > 0);
    h.close();
    assert_eq!(h.position(), NO_ROW);
    assert_eq!(h.records(), Err(Error::WrongCommand), "nothing open");
    assert_eq!(
        recycle::counter(Counter::TablesLive),
        live,
        "kept is not live"
    );
    assert_eq!(recycle::counter(Counter::RowsWritten), rows + 3);

    // An equal definition takes the kept table, empty, without building one.
    let mut h2 = Handler::<()>::default();
    h2.open_internal(Some(key.clone()), true, ("#sql-test", 1), build)
        .unwrap();
    assert_eq!(builds.get(), 1, "not built again");
    assert_eq!(internal_addr(&h2), first, "the same table");
    assert_eq!(
        h2.key.bytes.capacity(),
        room,
        "with the last handler's buffers"
    );
    assert_eq!(h2.rec_per_key.len(), 3);
    assert_eq!(h2.records(), Ok(0));
    let i = h2.info(&mut rpk).unwrap();
    assert!(i.key_stats_updated, "a new table's statistics are due");
    assert_eq!(i.stats.records, 0);
    assert_eq!(status::get(Counter::InternalTablesReused), reused + 1);
    assert_eq!(
        status::get(Counter::InternalTablesCreated),
        created + 2,
        "served twice"
    );
    assert_eq!(recycle::counter(Counter::TablesLive), live + 1);
    assert_eq!(recycle::counter(Counter::RowsWritten), rows + 3);
    // Its rows are its own.
    h2.rnd_init().unwrap();
    let mut out = [0u8; REC_LEN];
    assert_eq!(h2.rnd_next(&mut out), Err(Error::EndOfFile));
    write(&mut h2, &rec(Some(0), 0, 0)).unwrap();

    // A different definition, while the first is in use: a new table.
    let mut h3 = Handler::<()>::default();
    h3.open_internal(Some(other.clone()), true, ("#sql-test", 1), build)
        .unwrap();
    assert_eq!(builds.get(), 2);
    assert_ne!(internal_addr(&h3), first);
    assert_eq!(recycle::counter(Counter::TablesLive), live + 2);
    h3.close();
    h2.close();
    assert_eq!(recycle::counter(Counter::TablesLive), live);
    assert_eq!(recycle::counter(Counter::RowsWritten), rows + 4);

    // The kept tables go: the counters they were missing are made up.
    recycle::release_all();
    assert_eq!(recycle::counter(Counter::TablesLive), live);
    assert_eq!(status::get(Counter::TablesLive), live);
    assert_eq!(recycle::counter(Counter::RowsWritten), rows + 4);
    assert_eq!(status::get(Counter::RowsWritten), rows + 4);
    let mut h4 = Handler::<()>::default();
    h4.open_internal(Some(key), true, ("#sql-test", 1), build)
        .unwrap();
    assert_eq!(builds.get(), 3, "none kept any more");
    h4.close();
    recycle::release_all();
}

#[test]
fn a_full_internal_table_counts_as_converted_and_its_refused_rows_are_not_written() {
    let _g = counters_lock();
    let small = || {
        Ok(Table::new(
            crate::table::TableDef {
                max_rows: 10,
                ..testing::def(true)
            },
            0,
        ))
    };
    let converted = status::get(Counter::InternalTablesConverted);
    let rows = recycle::counter(Counter::RowsWritten);
    let mut h = Handler::<()>::default();
    h.open_internal(None, true, ("#sql-test", 1), small)
        .unwrap();
    // A refused duplicate is no conversion.
    write(&mut h, &rec(Some(0), 0, 0)).unwrap();
    assert_eq!(
        write(&mut h, &rec(Some(0), 0, 0)),
        Err(Error::DuplicateKey(UNIQUE_HASH))
    );
    assert_eq!(status::get(Counter::InternalTablesConverted), converted);
    let mut n = 1;
    let full = loop {
        match write(&mut h, &rec(Some(n), 0, 0)) {
            Ok(()) => n += 1,
            Err(e) => break e,
        }
        assert!(n < 100_000, "never full");
    };
    assert_eq!(full, Error::TableFull);
    assert!(n >= 10);
    assert_eq!(status::get(Counter::InternalTablesConverted), converted + 1);
    h.close();
    assert_eq!(recycle::counter(Counter::RowsWritten), rows + n as u64);

    // A named table that fills up is not converted.
    let share = Arc::new(Share::new(small().unwrap(), (), false));
    let mut h = Handler::<()>::default();
    h.open_shared(share, false).unwrap();
    for i in 0..n {
        write(&mut h, &rec(Some(i), 0, 0)).unwrap();
    }
    assert_eq!(write(&mut h, &rec(Some(n), 0, 0)), Err(Error::TableFull));
    assert_eq!(status::get(Counter::InternalTablesConverted), converted + 1);
    assert_eq!(status::get(Counter::RowsWritten), rows + 2 * n as u64);
}

#[test]
fn a_table_without_a_definition_key_is_not_kept() {
    let _g = counters_lock();
    let live = recycle::counter(Counter::TablesLive);
    let rows = recycle::counter(Counter::RowsWritten);
    let mut h = internal(true);
    assert_eq!(recycle::counter(Counter::TablesLive), live + 1);
    write(&mut h, &rec(Some(1), 0, 0)).unwrap();
    h.close();
    assert_eq!(status::get(Counter::TablesLive), live, "dropped");
    assert_eq!(recycle::counter(Counter::RowsWritten), rows + 1);
    assert_eq!(status::get(Counter::RowsWritten), rows + 1);
}

#[test]
fn a_panic_while_changing_an_internal_table_poisons_it() {
    let _g = counters_lock();
    let key = testing::shape_of("poisoned", 0);
    let live = recycle::counter(Counter::TablesLive);
    let builds = std::cell::Cell::new(0);
    let build = || {
        builds.set(builds.get() + 1);
        Ok(testing::table(true))
    };
    let mut h = Handler::<()>::default();
    h.open_internal(Some(key.clone()), true, ("#sql-test", 1), build)
        .unwrap();
    write(&mut h, &rec(Some(1), 0, 0)).unwrap();
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        h.with_table(|_| -> Result<()> { panic!("a bug while changing the table") })
    }));
    assert!(panicked.is_err());
    let mut out = [0u8; REC_LEN];
    assert!(is_internal(h.records()));
    h.rnd_init().unwrap_err();
    assert!(is_internal(h.rnd_next(&mut out)));
    assert!(is_internal(h.rnd_pos(&mut out, 0)));
    assert!(is_internal(write(&mut h, &rec(Some(2), 0, 0))));
    assert!(is_internal(h.index_edge(&mut out, BTREE, true)));
    assert!(is_internal(h.info(&mut [0; 3])));
    h.close();
    assert_eq!(
        recycle::counter(Counter::TablesLive),
        live,
        "dropped, not kept"
    );
    let mut h2 = Handler::<()>::default();
    h2.open_internal(Some(key), true, ("#sql-test", 1), build)
        .unwrap();
    assert_eq!(
        builds.get(),
        2,
        "a new table: the poisoned one was not kept"
    );
    assert_eq!(h2.records(), Ok(0));
    h2.close();
    recycle::release_all();
}

#[test]
fn a_panic_while_changing_a_named_table_poisons_it_for_every_handler() {
    let _g = counters_lock();
    let share = Arc::new(Share::new(testing::table(false), (), false));
    let (mut a, mut b) = (Handler::<()>::default(), Handler::<()>::default());
    a.open_shared(share.clone(), false).unwrap();
    b.open_shared(share, false).unwrap();
    write(&mut a, &rec(Some(1), 0, 0)).unwrap();
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        a.with_table(|_| -> Result<()> { panic!("a bug while changing the table") })
    }));
    assert!(panicked.is_err());
    assert!(is_internal(a.records()));
    assert!(is_internal(b.records()));
    assert!(is_internal(write(&mut b, &rec(Some(2), 0, 0))));
}

#[test]
fn reset_forgets_the_index_scan() {
    let _g = counters_lock();
    let mut h = internal(false);
    write(&mut h, &rec(Some(1), 0, 0)).unwrap();
    write(&mut h, &rec(Some(2), 0, 1)).unwrap();
    let mut out = [0u8; REC_LEN];
    h.index_edge(&mut out, BTREE, true).unwrap();
    h.reset_state();
    assert_eq!(h.index_step(&mut out, true), Err(Error::EndOfFile));
    h.index_edge(&mut out, BTREE, true).unwrap();
    h.reset();
    assert_eq!(h.index_step(&mut out, true), Err(Error::EndOfFile));
    // A closed handler answers WrongCommand.
    h.close();
    assert_eq!(h.rnd_init(), Err(Error::WrongCommand));
    assert_eq!(h.rnd_next(&mut out), Err(Error::WrongCommand));
    assert_eq!(h.index_step(&mut out, true), Err(Error::WrongCommand));
    assert_eq!(h.delete_all_rows(), Err(Error::WrongCommand));
}
