//! rheap's memory: blocks that start small and grow ([`policy`]), taken from the server's
//! allocator ([`system`]) through a bounded cache of freed blocks ([`cache`]), and carved into
//! small [`pieces`]: a table's packed rows', and its indexes' through an [`arena`]. A table's
//! row slots live in blocks of their own ([`crate::records`]).

pub mod arena;
pub mod budget;
pub mod cache;
#[cfg(feature = "failpoints")]
pub mod failing;
pub mod fallible;
pub mod pieces;
pub mod policy;
pub mod system;

pub use arena::Arena;
pub use fallible::{
    resize_default, trim, try_arc, try_box, try_collect, try_collect_ok, try_string, zeroed,
    KEEP_BUFFER,
};
pub use pieces::Pieces;
