//! rheap: a HEAP-compatible in-memory storage engine for MariaDB, built as `ha_rheap.so`.
//!
//! The core (records, tables, the registry of named tables) is plain Rust, tested without a
//! server. [`ffi`] is the only module that talks to the C++ shim: each of its functions serves
//! the `handler` method of the same name and catches every panic at the boundary.
#![warn(missing_debug_implementations)]

pub mod alloc;
pub mod boundary;
pub mod collation;
pub mod error;
pub mod index;
pub mod key;
pub mod limits;
pub mod records;
pub mod registry;
pub mod row;
pub mod row_store;
pub mod status;
pub mod table;

// The FFI calls functions of the C++ shim, which only exists inside the cdylib: unit-test
// executables of this crate leave it out.
#[cfg(not(test))]
pub mod ffi;
