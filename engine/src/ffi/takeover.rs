//! Taking over MEMORY's and Aria's tables: the shim's replacements of `heap_hton->create` and
//! `aria_hton->create` ask these which tables are rheap's (`rheap_takeover` = OFF | INTERNAL |
//! ALL, `rheap_takeover_information_schema`). The rules are the core's
//! ([`rheap_core::takeover`]).

use super::tables::TABLES;
use super::{guard, guard_value};
use rheap_core::takeover::{
    self, AriaTableRequest, HeapNames, Mode, SchemaTableRequest, ShareFacts, ShareKind,
};
use rheap_sys::shim::rheap_share_facts;
use std::ffi::{c_char, c_int, CStr};

// `rheap_takeover`'s values (rheap_shim.h, whose TYPELIB names them).
use rheap_sys::shim::{RHEAP_TAKEOVER_ALL as ALL, RHEAP_TAKEOVER_OFF as OFF};
const _: () = assert!(rheap_sys::shim::RHEAP_TAKEOVER_INTERNAL == 1);

/// The named MEMORY tables handed to HEAP while rheap is loaded.
static HEAP_NAMES: HeapNames = HeapNames::new();

/// Forgets the names of HEAP's tables (the plugin is unloading).
pub fn forget_heap_names() {
    HEAP_NAMES.clear();
}

/// `rheap_takeover`'s value in the core's terms.
fn mode_of(mode: u32) -> Mode {
    match mode {
        OFF => Mode::Off,
        ALL => Mode::All,
        _ => Mode::Internal,
    }
}

/// What the shim says of a share, in the core's terms, and the table's path.
///
/// # Safety
/// `f.db` must point to `f.db_length` bytes, and `f.path` be NULL or a NUL-terminated string.
unsafe fn facts_of(f: &rheap_share_facts) -> (ShareFacts<'_>, Option<&CStr>) {
    let db: &[u8] = if f.db.is_null() || f.db_length == 0 {
        &[]
    } else {
        // SAFETY: by the contract.
        unsafe { std::slice::from_raw_parts(f.db.cast::<u8>(), f.db_length) }
    };
    let path = (!f.path.is_null())
        // SAFETY: non-null, so NUL-terminated by the contract.
        .then(|| unsafe { CStr::from_ptr(f.path) });
    let facts = ShareFacts {
        internal_tmp: f.internal_tmp != 0,
        // A database name that is not UTF-8 is no schema the rules name.
        db: std::str::from_utf8(db).unwrap_or("\u{fffd}"),
        blob_fields: f.blob_fields,
        max_rows: f.max_rows,
        made_by_create_tmp_table: f.made_by_create_tmp_table != 0,
    };
    (facts, path)
}

/// Whether rheap serves a MEMORY table (see [`takeover::serves_memory_table`]).
fn serves(mode: Mode, kind: ShareKind, name: Option<&str>) -> crate::error::Result<bool> {
    // A partitioned table's partitions are tables of their own (`<table>#P#<part>`).
    let holds = |name: &str| TABLES.contains_or_parts(name, "#P#");
    takeover::serves_memory_table(mode, kind, name, holds, &HEAP_NAMES)
}

/// Whether rheap serves the MEMORY table of the share the shim describes (`facts` NULL: no
/// share at hand, a rename or a drop).
///
/// # Safety
/// `facts` must be NULL or valid, as [`facts_of`] requires.
#[no_mangle]
pub unsafe extern "C" fn rheap_serves(mode: u32, facts: *const rheap_share_facts) -> u8 {
    guard_value("rheap_serves", 0, || {
        // SAFETY: NULL or valid by the contract.
        let Some(f) = (unsafe { facts.as_ref() }) else {
            return serves(mode_of(mode), ShareKind::Named, None).map(u8::from);
        };
        // SAFETY: as above.
        let (facts, path) = unsafe { facts_of(f) };
        let kind = facts.kind();
        // An internal table goes by the mode alone: its path is not even read as text.
        let name = path.filter(|_| kind != ShareKind::Internal);
        serves(
            mode_of(mode),
            kind,
            name.map(CStr::to_string_lossy).as_deref(),
        )
        .map(u8::from)
    })
}

/// Whether rheap serves the MEMORY table `name` that a handler made without a share creates
/// (the partition engine makes those).
///
/// # Safety
/// `name` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn rheap_serves_created(mode: u32, name: *const c_char) -> u8 {
    guard_value("rheap_serves_created", 0, || {
        let name = (!name.is_null())
            // SAFETY: non-null, so NUL-terminated by the contract.
            .then(|| unsafe { CStr::from_ptr(name) }.to_string_lossy());
        serves(mode_of(mode), ShareKind::Creating, name.as_deref()).map(u8::from)
    })
}

/// Whether rheap serves an information_schema table that the server builds in Aria because it
/// has BLOB/TEXT columns (`Create_tmp_table::choose_engine`): information_schema.COLUMNS for
/// SHOW FULL COLUMNS, ROUTINES, VIEWS, TRIGGERS and the others. rheap then holds it as one of
/// MEMORY's internal tables, with its BLOBs, and the server treats it as in memory from there
/// on: no Aria files, and the server's own conversion to Aria if it outgrows the in-memory
/// limit. The rules: [`takeover::serves_schema_table`]; counted in
/// `Rheap_information_schema_tables`.
///
/// # Safety
/// `facts` must be NULL or valid, as [`facts_of`] requires.
#[no_mangle]
pub unsafe extern "C" fn rheap_serves_schema_table(
    mode: u32,
    facts: *const rheap_share_facts,
    schema_tables: u8,
    structure_only: u8,
    disk_asked: u8,
) -> u8 {
    guard_value("rheap_serves_schema_table", 0, || {
        // SAFETY: NULL or valid by the contract.
        let Some(f) = (unsafe { facts.as_ref() }) else {
            return Ok(0);
        };
        // SAFETY: as above.
        let (facts, _) = unsafe { facts_of(f) };
        let request = SchemaTableRequest {
            enabled: schema_tables != 0,
            structure_only: structure_only != 0,
            disk_asked: disk_asked != 0,
        };
        let serves = takeover::serves_schema_table(mode_of(mode), &facts, request);
        if serves {
            rheap_core::status::add(rheap_core::status::Counter::SchemaTablesServed, 1);
        }
        Ok(u8::from(serves))
    })
}

/// Whether rheap serves a statement's internal table with BLOB/TEXT columns that the server
/// builds in Aria (see [`takeover::serves_aria_table`]).
///
/// # Safety
/// `facts` NULL or valid, as for [`rheap_serves_schema_table`].
#[no_mangle]
pub unsafe extern "C" fn rheap_serves_aria_table(
    mode: u32,
    facts: *const rheap_share_facts,
    enabled: u8,
    disk_asked: u8,
    fulltext: u8,
) -> u8 {
    guard_value("rheap_serves_aria_table", 0, || {
        // SAFETY: NULL or valid by the contract.
        let Some(f) = (unsafe { facts.as_ref() }) else {
            return Ok(0);
        };
        // SAFETY: as above.
        let (facts, _) = unsafe { facts_of(f) };
        let request = AriaTableRequest {
            enabled: enabled != 0,
            disk_asked: disk_asked != 0,
            fulltext: fulltext != 0,
        };
        let serves = takeover::serves_aria_table(mode_of(mode), &facts, request);
        if serves {
            rheap_core::status::add(rheap_core::status::Counter::AriaTablesServed, 1);
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
        HEAP_NAMES.moved(from, to)
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
