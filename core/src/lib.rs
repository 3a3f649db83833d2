//! rheap's engine core: the tables, rows, keys, indexes, allocator and registry of named tables
//! behind `ha_rheap.so`, in plain Rust.
//!
//! Nothing here knows the server. What the core needs from it comes in through small interfaces
//! the plugin fills and tests fake: where blocks come from ([`alloc::system::Source`]), how a
//! collation weighs a string ([`key::collation::Collation`]), and the server-wide memory
//! accounting. The plugin crate (`rheap`, `engine/`) translates the `handler` calls into calls
//! here and maps [`error::Error`] to the server's codes; `cargo test -p rheap-core` needs
//! nothing but a Rust toolchain.
#![warn(missing_debug_implementations)]

pub mod alloc;
pub mod catalog;
pub(crate) mod cpu;
pub mod error;
pub mod handler;
pub mod index;
pub mod key;
pub mod limits;
pub mod recycle;
pub mod rows;
pub mod status;
pub mod table;
pub mod takeover;
#[cfg(test)]
pub(crate) mod testing;
