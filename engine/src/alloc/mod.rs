//! rheap's memory: blocks that start small and grow ([`policy`]), taken from the server's
//! allocator ([`system`]) through a bounded cache of freed blocks ([`cache`]), and carved for a
//! table's indexes by an [`arena`]. A table's rows live in blocks of their own
//! ([`crate::records`]).

pub mod arena;
pub mod cache;
pub mod policy;
pub mod system;

pub use arena::Arena;
