//! rheap's memory: blocks that start small and grow ([`policy`]), taken from the server's
//! allocator ([`system`]) through a bounded cache of freed blocks ([`cache`]), and carved into
//! small [`pieces`]: a table's packed rows', and its indexes' through an [`arena`]. A table's
//! row slots live in blocks of their own ([`crate::rows::records`]). Every block a table holds is
//! counted by its [`meter`], which refuses blocks past the table's limit; the server-wide
//! [`budget`] refuses blocks past rheap's total; either refusal makes the write's table full
//! ([`refusal`]). What the plugin allocates outside blocks is counted by its [`heap`].

pub mod arena;
pub mod budget;
pub mod cache;
pub mod chunks;
pub mod fallible;
pub mod heap;
pub mod meter;
pub mod pieces;
pub mod policy;
pub mod refusal;
pub mod system;

pub use arena::Arena;
pub use fallible::{
    resize_default, trim, try_arc, try_box, try_collect, try_collect_ok, try_string, zeroed,
    KEEP_BUFFER,
};
pub use meter::Meter;
pub use pieces::Pieces;
