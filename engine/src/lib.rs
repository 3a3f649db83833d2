//! rheap: a HEAP-compatible in-memory storage engine for MariaDB, built as `ha_rheap.so`.
//!
//! The core (records, tables, the registry of named tables) is plain Rust, tested without a
//! server. [`ffi`] is the only module that talks to the C++ shim: each of its functions serves
//! the `handler` method of the same name and catches every panic at the boundary.
//!
//! The functions a row passes through (write, update, index read, scan) carry
//! `#[link_section = ".text.hot.rheap.<module>.<function>"]`: the linker gathers them in one
//! `.text.hot` section (build.rs), so that between two rows, when the server's own code has
//! pushed rheap's out of the instruction cache, a row brings back fewer cache lines. One section
//! per function keeps unused ones collectable (the core's test executables have no shim).
#![warn(missing_debug_implementations)]

pub mod alloc;
pub mod boundary;
pub mod collation;
pub mod cpu;
pub mod error;
pub mod index;
pub mod key;
pub mod limits;
pub mod pool;
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
