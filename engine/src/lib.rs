//! rheap's plugin, built as `ha_rheap.so`: the functions the C++ shim (`rheap-sys`) calls for
//! each `handler` method, each named after the method it serves, each a translation into the
//! engine core ([`rheap_core`]) that catches every panic at the boundary ([`boundary`]) and
//! maps the core's errors to the server's codes ([`error::ha_err`]).
#![warn(missing_debug_implementations)]

pub mod boundary;
pub mod error;

// The FFI calls functions of the C++ shim, which only exists inside the cdylib: unit-test
// executables of this crate leave it out.
#[cfg(not(test))]
pub mod ffi;
#[cfg(not(test))]
pub mod heap;
