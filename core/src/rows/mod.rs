//! A table's rows: the packed format of a record ([`format`]), fixed slots in HEAP's order
//! ([`records`]), the store that holds a table's rows in one of its layouts ([`store`]), and an
//! internal table's rows back to back ([`log`]).

pub mod format;
pub(crate) mod log;
pub mod records;
pub(crate) mod store;
