//! `information_schema.RHEAP_TABLES`: the list of live tables ([`rheap_core::catalog::live`]), one row
//! per table, handed to the shim's fill function.

use super::{guard_value, INTERNAL_ERROR};
use crate::error::{ha_err, Error};
use rheap_core::catalog::live::{self, Audience, Kind};
use rheap_sys::shim::{
    rheap_live_table, RHEAP_AUDIENCE_OWNER, RHEAP_AUDIENCE_PRIVILEGED, RHEAP_AUDIENCE_PROCESS,
};
use std::ffi::{c_int, c_void};

/// The shim's code of who may see a row.
fn audience(a: Audience) -> u8 {
    (match a {
        Audience::Privileged => RHEAP_AUDIENCE_PRIVILEGED,
        Audience::Owner => RHEAP_AUDIENCE_OWNER,
        Audience::Process => RHEAP_AUDIENCE_PROCESS,
    }) as u8
}

/// The shim's function that stores one row of the view: 0, or an error that stops the fill.
type StoreRow = unsafe extern "C" fn(ctx: *mut c_void, row: *const rheap_live_table) -> c_int;

/// The fill of `information_schema.RHEAP_TABLES`: `store` once per live table, with `ctx`;
/// stops at the first non-zero answer and returns it (HA_ERR_OUT_OF_MEM when the list cannot
/// be copied). The list is copied first, so no lock is held while the server stores rows.
///
/// # Safety
/// `store` must be callable with `ctx` and a row valid for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn rheap_live_tables(store: Option<StoreRow>, ctx: *mut c_void) -> c_int {
    guard_value("rheap_live_tables", INTERNAL_ERROR, || {
        let Some(store) = store else {
            return Ok(ha_err(&Error::WrongCommand));
        };
        let tables = match live::snapshot() {
            Ok(tables) => tables,
            Err(e) => return Ok(ha_err(&e)),
        };
        for t in tables {
            let row = rheap_live_table {
                kind: t.kind.name().as_ptr().cast(),
                kind_len: t.kind.name().len() as u32,
                path: t.name.as_ptr().cast(),
                path_len: t.name.len() as u32,
                named: u8::from(t.kind == Kind::Table),
                audience: audience(t.audience()),
                connection: t.connection,
                rows: t.rows,
                data_bytes: t.data_bytes,
                index_bytes: t.index_bytes,
                blocks: t.blocks,
                max_bytes: t.limit,
            };
            // SAFETY: by the contract; `row` and its strings live until the call returns.
            match unsafe { store(ctx, &row) } {
                0 => {}
                stop => return Ok(stop),
            }
        }
        Ok(0)
    })
}
