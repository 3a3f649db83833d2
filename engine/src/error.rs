//! Errors of the engine core, and their one mapping to the server's `HA_ERR_*` codes.

use std::fmt;

/// Why an engine operation did not succeed.
///
/// End-of-scan and key-not-found are ordinary outcomes for the server, so they are variants
/// here too: the FFI layer returns every variant through [`Error::ha_err`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A scan or index read has no further row (`HA_ERR_END_OF_FILE`).
    EndOfFile,
    /// No table of that name exists (`ENOENT`, as HEAP reports it).
    NoSuchTable,
    /// A table of that name exists already (`EEXIST`).
    TableExists,
    /// The table reached its row or memory limit (`HA_ERR_RECORD_FILE_FULL`).
    TableFull,
    /// Memory could not be allocated (`HA_ERR_OUT_OF_MEM`).
    OutOfMemory,
    /// A position handed back by the server does not name a live row
    /// (`HA_ERR_RECORD_DELETED`).
    RecordDeleted,
    /// A row buffer of the wrong length, or a call out of sequence (`HA_ERR_WRONG_COMMAND`).
    WrongCommand,
    /// A unique key already has the row's value; the key's number (`HA_ERR_FOUND_DUPP_KEY`).
    DuplicateKey(usize),
    /// An index read found no row with the key (`HA_ERR_KEY_NOT_FOUND`).
    KeyNotFound,
    /// The index does not exist or is disabled (`HA_ERR_WRONG_INDEX`).
    WrongIndex,
    /// The table changed since a HANDLER scan was positioned (`HA_ERR_RECORD_CHANGED`).
    RecordChanged,
    /// Indexes cannot be enabled on a table that holds rows (`HA_ERR_CRASHED`, as HEAP).
    Crashed,
    /// An unexpected internal failure, e.g. a caught panic (`HA_ERR_INTERNAL_ERROR`). The
    /// message is boxed to keep `Error`, and so every `Result` of the hot paths, two words.
    Internal(Box<String>),
}

/// The server's error codes this module maps to (include/my_base.h, include/errno.h).
pub mod code {
    pub use rheap_sys::{
        HA_ERR_CRASHED, HA_ERR_END_OF_FILE, HA_ERR_FOUND_DUPP_KEY, HA_ERR_INTERNAL_ERROR,
        HA_ERR_KEY_NOT_FOUND, HA_ERR_OUT_OF_MEM, HA_ERR_RECORD_CHANGED, HA_ERR_RECORD_DELETED,
        HA_ERR_RECORD_FILE_FULL, HA_ERR_WRONG_COMMAND, HA_ERR_WRONG_INDEX,
    };
    /// `ENOENT`: what HEAP's drop and open report for a table it does not have.
    pub const ENOENT: i32 = 2;
    /// `EEXIST`.
    pub const EEXIST: i32 = 17;
}

impl Error {
    /// An [`Error::Internal`] with `msg`.
    pub fn internal(msg: impl Into<String>) -> Error {
        Error::Internal(Box::new(msg.into()))
    }

    /// The one mapping from engine errors to the server's `HA_ERR_*` (or errno) codes.
    pub fn ha_err(&self) -> i32 {
        match self {
            Error::EndOfFile => code::HA_ERR_END_OF_FILE,
            Error::NoSuchTable => code::ENOENT,
            Error::TableExists => code::EEXIST,
            Error::TableFull => code::HA_ERR_RECORD_FILE_FULL,
            Error::OutOfMemory => code::HA_ERR_OUT_OF_MEM,
            Error::RecordDeleted => code::HA_ERR_RECORD_DELETED,
            Error::WrongCommand => code::HA_ERR_WRONG_COMMAND,
            Error::DuplicateKey(_) => code::HA_ERR_FOUND_DUPP_KEY,
            Error::KeyNotFound => code::HA_ERR_KEY_NOT_FOUND,
            Error::WrongIndex => code::HA_ERR_WRONG_INDEX,
            Error::Crashed => code::HA_ERR_CRASHED,
            Error::RecordChanged => code::HA_ERR_RECORD_CHANGED,
            Error::Internal(_) => code::HA_ERR_INTERNAL_ERROR,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::EndOfFile => f.write_str("end of file"),
            Error::NoSuchTable => f.write_str("no such table"),
            Error::TableExists => f.write_str("table exists"),
            Error::TableFull => f.write_str("table is full"),
            Error::OutOfMemory => f.write_str("out of memory"),
            Error::RecordDeleted => f.write_str("record was deleted"),
            Error::WrongCommand => f.write_str("operation not valid here"),
            Error::DuplicateKey(k) => write!(f, "duplicate value in key {k}"),
            Error::KeyNotFound => f.write_str("key not found"),
            Error::WrongIndex => f.write_str("no such index"),
            Error::RecordChanged => f.write_str("the table changed since the scan was positioned"),
            Error::Crashed => f.write_str("indexes cannot be rebuilt on a table with rows"),
            Error::Internal(m) => write!(f, "internal error: {m}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<std::collections::TryReserveError> for Error {
    fn from(_: std::collections::TryReserveError) -> Self {
        Error::OutOfMemory
    }
}

impl From<hashbrown::TryReserveError> for Error {
    fn from(_: hashbrown::TryReserveError) -> Self {
        Error::OutOfMemory
    }
}

impl From<allocator_api2::collections::TryReserveError> for Error {
    fn from(_: allocator_api2::collections::TryReserveError) -> Self {
        Error::OutOfMemory
    }
}

pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_the_servers() {
        assert_eq!(Error::EndOfFile.ha_err(), 137);
        assert_eq!(Error::TableFull.ha_err(), 135);
        assert_eq!(Error::NoSuchTable.ha_err(), 2);
        assert_eq!(Error::internal("x").ha_err(), 122);
        // Small enough that a `Result<()>` comes back in registers.
        assert_eq!(std::mem::size_of::<Result<()>>(), 16);
    }
}
