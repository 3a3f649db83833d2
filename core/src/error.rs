//! Errors of the engine core. The plugin maps them to the server's `HA_ERR_*` codes, in one
//! function (the `rheap` crate's `error::ha_err`).

use std::fmt;

/// Why an engine operation did not succeed.
///
/// End-of-scan and key-not-found are ordinary outcomes for the server, so they are variants
/// here too: the plugin returns every variant to the server as a code.
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
    /// A unique constraint already has the row's value; the key's number
    /// (`HA_ERR_FOUND_DUPP_UNIQUE`, as Aria reports a `MARIA_UNIQUEDEF`'s duplicate).
    DuplicateUnique(usize),
    /// An index read found no row with the key (`HA_ERR_KEY_NOT_FOUND`).
    KeyNotFound,
    /// The index does not exist or is disabled (`HA_ERR_WRONG_INDEX`).
    WrongIndex,
    /// The table changed since a HANDLER scan was positioned (`HA_ERR_RECORD_CHANGED`).
    RecordChanged,
    /// Indexes cannot be enabled on a table that holds rows (`HA_ERR_CRASHED`, as HEAP).
    Crashed,
    /// A definition the engine cannot serve, though the server's own engine for it could (a
    /// key over a BLOB in a collation that weighs on several levels): `HA_ERR_UNSUPPORTED`, on
    /// which a table in Aria's place is made in Aria.
    Unsupported,
    /// An unexpected internal failure, e.g. a caught panic (`HA_ERR_INTERNAL_ERROR`). The
    /// message is boxed to keep `Error`, and so every `Result` of the hot paths, two words.
    Internal(Box<String>),
}

impl Error {
    /// An [`Error::Internal`] with `msg`.
    pub fn internal(msg: impl Into<String>) -> Error {
        Error::Internal(Box::new(msg.into()))
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
            Error::DuplicateUnique(k) => write!(f, "duplicate value in unique constraint {k}"),
            Error::Unsupported => f.write_str("a definition the engine cannot serve"),
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
    fn results_stay_small() {
        // Small enough that a `Result<()>` comes back in registers.
        assert_eq!(std::mem::size_of::<Result<()>>(), 16);
    }
}
