//! The tables as the server and its users find them: named tables by name ([`registry`]), a
//! table as its handlers have it open ([`share`]), and every live table with what it holds,
//! for `information_schema.RHEAP_TABLES` ([`live`]).

pub mod live;
pub mod registry;
pub mod share;
