//! The one mapping from the core's errors to the server's `HA_ERR_*` (or errno) codes.

pub use rheap_core::error::{Error, Result};

/// The server's error codes [`ha_err`] maps to (include/my_base.h, include/errno.h).
pub mod code {
    pub use rheap_sys::{
        HA_ERR_CRASHED, HA_ERR_END_OF_FILE, HA_ERR_FOUND_DUPP_KEY, HA_ERR_FOUND_DUPP_UNIQUE,
        HA_ERR_INTERNAL_ERROR, HA_ERR_KEY_NOT_FOUND, HA_ERR_OUT_OF_MEM, HA_ERR_RECORD_CHANGED,
        HA_ERR_RECORD_DELETED, HA_ERR_RECORD_FILE_FULL, HA_ERR_UNSUPPORTED, HA_ERR_WRONG_COMMAND,
        HA_ERR_WRONG_INDEX,
    };
    /// `ENOENT`: what HEAP's drop and open report for a table it does not have.
    pub const ENOENT: i32 = 2;
    /// `EEXIST`.
    pub const EEXIST: i32 = 17;
}

/// The code the server gets for `e`.
pub fn ha_err(e: &Error) -> i32 {
    match e {
        Error::EndOfFile => code::HA_ERR_END_OF_FILE,
        Error::NoSuchTable => code::ENOENT,
        Error::TableExists => code::EEXIST,
        Error::TableFull => code::HA_ERR_RECORD_FILE_FULL,
        Error::OutOfMemory => code::HA_ERR_OUT_OF_MEM,
        Error::RecordDeleted => code::HA_ERR_RECORD_DELETED,
        Error::WrongCommand => code::HA_ERR_WRONG_COMMAND,
        Error::DuplicateKey(_) => code::HA_ERR_FOUND_DUPP_KEY,
        Error::DuplicateUnique(_) => code::HA_ERR_FOUND_DUPP_UNIQUE,
        Error::Unsupported => code::HA_ERR_UNSUPPORTED,
        Error::KeyNotFound => code::HA_ERR_KEY_NOT_FOUND,
        Error::WrongIndex => code::HA_ERR_WRONG_INDEX,
        Error::Crashed => code::HA_ERR_CRASHED,
        Error::RecordChanged => code::HA_ERR_RECORD_CHANGED,
        // Error is non-exhaustive: a variant the core adds later is an internal error here
        // until it gets a code of its own.
        _ => code::HA_ERR_INTERNAL_ERROR,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_the_servers() {
        assert_eq!(ha_err(&Error::EndOfFile), 137);
        assert_eq!(ha_err(&Error::TableFull), 135);
        assert_eq!(ha_err(&Error::NoSuchTable), 2);
        assert_eq!(ha_err(&Error::internal("x")), 122);
    }
}
