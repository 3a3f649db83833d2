//! Taking over MEMORY's tables: which tables the shim's replacement of `heap_hton->create`
//! hands to rheap (`rheap_takeover` = OFF | INTERNAL | ALL).
//!
//! A table rheap already holds stays rheap's whatever the mode is now, so changing the mode only
//! affects tables created afterwards; a MEMORY table rheap does not hold stays HEAP's. That
//! includes a table HEAP holds that the server creates again by its name (TRUNCATE re-creates
//! a MEMORY table): HEAP's create then frees the old rows, as it does without rheap, and the
//! table stays HEAP's. So rheap remembers the names of the MEMORY tables it has seen handed to
//! HEAP ([`HEAP_NAMES`]), and forgets a name when HEAP drops or renames its table.

use super::share::TABLES;
use super::{guard, guard_value};
use std::ffi::{c_char, c_int, CStr};
use std::sync::Mutex;

// `rheap_takeover`'s values (rheap_shim.h, whose TYPELIB names them).
use rheap_sys::shim::{RHEAP_TAKEOVER_ALL as ALL, RHEAP_TAKEOVER_OFF as OFF};

/// The named MEMORY tables handed to HEAP while rheap is loaded (opened, or created in a mode
/// that left them to HEAP), until HEAP drops or renames them. A few names at most (MEMORY
/// tables of users, not internal ones), so a list.
static HEAP_NAMES: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn heap_names() -> std::sync::MutexGuard<'static, Vec<String>> {
    HEAP_NAMES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether HEAP holds the table `name`, as far as rheap has seen.
fn heap_has(name: &str) -> bool {
    heap_names().iter().any(|n| n == name)
}

/// Remembers `name` as HEAP's; fails only when out of memory.
fn remember(names: &mut Vec<String>, name: &str) -> crate::error::Result<()> {
    if !names.iter().any(|n| n == name) {
        let owned = crate::alloc::try_string(name)?;
        names.try_reserve(1)?;
        names.push(owned);
    }
    Ok(())
}

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
        if ours || (creating != 0 && mode == ALL && !heap_has(&name)) {
            return Ok(1);
        }
        remember(&mut heap_names(), &name)?;
        Ok(0)
    })
}

/// Whether rheap serves an information_schema table that the server builds in Aria because it
/// has BLOB/TEXT columns (`Create_tmp_table::choose_engine`): information_schema.COLUMNS for
/// SHOW FULL COLUMNS, ROUTINES, VIEWS, TRIGGERS and the others. rheap then holds it as one of
/// MEMORY's internal tables, with its BLOBs, and the server treats it as in memory from there
/// on: no Aria files, and the server's own conversion to Aria if it outgrows the in-memory
/// limit.
///
/// `mode` is `rheap_takeover` (OFF serves nothing), `schema_tables`
/// `rheap_takeover_information_schema`. Left to Aria: a table built only for its definition
/// (`structure_only`: SHOW CREATE TABLE, CREATE TABLE ... LIKE, information_schema.TABLES
/// over information_schema itself), so that the engine those show stays the server's own; and
/// a session that asks for on-disk temporary tables (`disk_asked`: `big_tables`,
/// `tmp_memory_table_size` = 0).
#[no_mangle]
pub extern "C" fn rheap_serves_schema_table(
    mode: u32,
    schema_tables: u8,
    structure_only: u8,
    disk_asked: u8,
) -> u8 {
    guard_value("rheap_serves_schema_table", 0, || {
        let serves = mode != OFF && schema_tables != 0 && structure_only == 0 && disk_asked == 0;
        if serves {
            crate::status::add(crate::status::Counter::SchemaTablesServed, 1);
        }
        Ok(u8::from(serves))
    })
}

/// HEAP's table `from` was dropped (`to` NULL) or renamed to `to`: rheap forgets (or moves)
/// the name it remembered for it.
///
/// # Safety
/// `from` must be a NUL-terminated string; `to` NULL or one.
#[no_mangle]
pub unsafe extern "C" fn rheap_heap_table_moved(from: *const c_char, to: *const c_char) -> c_int {
    guard("rheap_heap_table_moved", || {
        // SAFETY: NUL-terminated by the contract.
        let from = unsafe { super::table_name(from) }?;
        let to = if to.is_null() {
            None
        } else {
            // SAFETY: non-null, so NUL-terminated by the contract.
            Some(unsafe { super::table_name(to) }?)
        };
        let mut names = heap_names();
        let Some(at) = names.iter().position(|n| n == from) else {
            return Ok(());
        };
        names.swap_remove(at);
        match to {
            Some(to) => remember(&mut names, to),
            None => Ok(()),
        }
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
