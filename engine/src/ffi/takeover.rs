//! Taking over MEMORY's tables: which tables the shim's replacement of `heap_hton->create`
//! hands to rheap (`rheap_takeover` = OFF | INTERNAL | ALL).
//!
//! A table rheap already holds stays rheap's whatever the mode is now, so changing the mode only
//! affects tables created afterwards; a MEMORY table rheap does not hold stays HEAP's.

use super::guard_value;
use super::share::TABLES;
use std::ffi::{c_char, CStr};

/// `rheap_takeover`'s values, in the order of the shim's TYPELIB (OFF 0, INTERNAL 1, ALL 2).
const OFF: u32 = 0;
const ALL: u32 = 2;

/// Whether rheap serves a table of MEMORY: `internal` for the server's internal temporary
/// tables, `creating` for a table being created (CREATE TABLE, ALTER's new table), `name` the
/// table's path (NULL when the server has no table at hand, e.g. for a rename: rheap's handler
/// then passes on to HEAP what it does not hold).
///
/// Only a table being created goes by the mode: an existing table that rheap does not hold is
/// HEAP's (made in another mode), and must stay so even under ALL, else opening it again (after
/// FLUSH TABLES, or when the table cache has no free instance) would give an empty table of
/// rheap's in place of HEAP's rows.
///
/// # Safety
/// `name` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn rheap_serves(
    mode: u32,
    internal: u8,
    creating: u8,
    name: *const c_char,
) -> u8 {
    guard_value("rheap_serves", 0, || {
        if internal != 0 {
            // Internal temporary tables are private to their statement and never named in
            // the registry: no lookup on this hot path.
            return Ok(u8::from(mode != OFF));
        }
        if name.is_null() {
            // A rename or drop: rheap's handler does it for the tables rheap holds and passes
            // on the others to HEAP, whatever the mode is now.
            return Ok(1);
        }
        // SAFETY: non-null and NUL-terminated by the contract.
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        // A partitioned table's partitions are tables of their own (`<table>#P#<part>`).
        let ours = TABLES.contains_or_parts(&name, "#P#");
        Ok(u8::from(ours || (creating != 0 && mode == ALL)))
    })
}

/// Whether rheap holds the named table (for the handler's fallbacks to HEAP).
///
/// # Safety
/// `name` must be a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn rheap_has_table(name: *const c_char) -> u8 {
    guard_value("rheap_has_table", 0, || {
        // SAFETY: NUL-terminated by the contract.
        let name = unsafe { super::table_name(name) }?;
        Ok(u8::from(TABLES.get(name).is_some()))
    })
}

/// How many ENGINE=MEMORY tables rheap holds.
#[no_mangle]
pub extern "C" fn rheap_memory_tables() -> u64 {
    guard_value("rheap_memory_tables", 0, || {
        Ok(TABLES.count_where(|s| s.for_memory) as u64)
    })
}
