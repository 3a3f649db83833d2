//! Where a table is full: its limits from the server's settings ([`size`]), and under
//! `rheap_table_size_limit=HEAP` the row where MEMORY would find it full ([`heap`]). (Under
//! `ACTUAL`, the default, a table's real bytes decide: [`crate::alloc::meter`].)

mod heap;
mod size;

pub use heap::*;
pub use size::*;
