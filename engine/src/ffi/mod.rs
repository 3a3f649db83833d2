//! The `extern "C"` surface the C++ shim calls (sys/shim/rheap_shim.h).
//!
//! Every entry point runs its body through `guard`, which turns an [`Error`] into the
//! server's code and a panic into `HA_ERR_INTERNAL_ERROR` plus a line in the error log: a
//! panic never unwinds into C++.

mod charset;
mod definition;
mod handler;
mod index;
mod live_tables;
mod plugin;
mod tables;
mod takeover;

use crate::error::{Error, Result};
use std::ffi::{c_int, CStr};

/// Runs `f` for the entry point `name`; 0 on success, else the error's code.
fn guard(name: &str, f: impl FnOnce() -> Result<()>) -> c_int {
    guard_value(name, INTERNAL_ERROR, || {
        Ok(f().map_or_else(|e| crate::error::ha_err(&e), |()| 0))
    })
}

/// `HA_ERR_INTERNAL_ERROR`, what an entry point returns when its body panicked.
const INTERNAL_ERROR: c_int = crate::error::code::HA_ERR_INTERNAL_ERROR;

/// Runs `f` for the entry point `name`; `on_failure` (logged) if it fails or panics.
fn guard_value<T>(name: &str, on_failure: T, f: impl FnOnce() -> Result<T>) -> T {
    let (v, failure) = crate::boundary::catch(on_failure, f);
    if let Some(failure) = failure {
        log(0, failure.message(name).as_c_str());
    }
    v
}

/// A line in the server's error log (0 error, 1 warning, 2 note).
fn log(level: c_int, msg: &CStr) {
    // SAFETY: `msg` is a valid NUL-terminated string that outlives the call; rheap_log only
    // formats it into the error log.
    unsafe { rheap_sys::shim::rheap_log(level, msg.as_ptr()) }
}

/// A table name from the server.
///
/// # Safety
/// `name` must be NULL or point to a NUL-terminated string valid for the returned lifetime.
unsafe fn table_name<'a>(name: *const std::ffi::c_char) -> Result<&'a str> {
    if name.is_null() {
        return Err(Error::WrongCommand);
    }
    // SAFETY: non-null, and NUL-terminated and live by the caller's contract.
    let name = unsafe { CStr::from_ptr(name) };
    name.to_str()
        .map_err(|_| Error::internal("table name is not UTF-8"))
}
