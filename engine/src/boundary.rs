//! What every `extern "C"` entry point does with its body: run it, and turn a panic into a
//! failure value plus a message, so that no panic ever unwinds into the server's C++.
//!
//! The message is made without allocating ([`Message`]): the failure it reports may be that
//! memory ran out, and an allocation failing then would abort the server.

use crate::error::Result;
use std::ffi::CStr;
use std::fmt::{self, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Bytes a [`Message`] holds, its NUL included; longer messages are cut.
const MESSAGE_BYTES: usize = 512;

/// A line for the error log, in a buffer of its own: NUL-terminated, no NUL inside.
pub struct Message {
    buf: [u8; MESSAGE_BYTES],
    len: usize,
}

impl Message {
    fn new() -> Message {
        Message {
            buf: [0; MESSAGE_BYTES],
            len: 0,
        }
    }

    pub fn as_str(&self) -> &str {
        // Only whole characters are written (see write_str).
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }

    /// The message as a C string (the byte after it is always a NUL).
    pub fn as_c_str(&self) -> &CStr {
        CStr::from_bytes_until_nul(&self.buf[..=self.len]).unwrap_or_default()
    }
}

impl Write for Message {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for c in s.chars() {
            let c = if c == '\0' { ' ' } else { c };
            let n = c.len_utf8();
            // One byte stays for the NUL.
            if self.len + n >= MESSAGE_BYTES {
                break;
            }
            c.encode_utf8(&mut self.buf[self.len..]);
            self.len += n;
        }
        Ok(())
    }
}

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// Why an entry point's body did not succeed: its error, or the payload of its panic.
#[derive(Debug)]
pub enum Failure {
    Error(crate::error::Error),
    Panic(Box<dyn std::any::Any + Send>),
}

impl Failure {
    /// The line to log for a failure of entry point `name` (out of line: only failures pay
    /// for the message's buffer).
    #[cold]
    #[inline(never)]
    pub fn message(&self, name: &str) -> Message {
        let mut msg = Message::new();
        let _ = match self {
            Failure::Error(e) => write!(msg, "{name}: {e}"),
            Failure::Panic(payload) => {
                let what = payload
                    .downcast_ref::<&str>()
                    .copied()
                    .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
                    .unwrap_or("unknown panic");
                write!(msg, "internal error in {name}: {what}")
            }
        };
        msg
    }
}

/// Runs `f`; on an error or a panic returns `on_failure` and the failure, to be logged.
pub fn catch<T>(on_failure: T, f: impl FnOnce() -> Result<T>) -> (T, Option<Failure>) {
    // AssertUnwindSafe: after a panic the entry point returns an error and the server
    // abandons the statement; shared tables detect a panic mid-change through their poisoned
    // lock (rheap_core::catalog::share) and refuse further use instead of reading a half-made change.
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => (v, None),
        Ok(Err(e)) => (on_failure, Some(Failure::Error(e))),
        Err(payload) => (on_failure, Some(Failure::Panic(payload))),
    }
}

#[cfg(test)]
mod tests {
    use super::{catch, Message, MESSAGE_BYTES};
    use crate::error::Error;

    #[test]
    fn values_pass_through() {
        let (v, failure) = catch(-1, || Ok(7));
        assert_eq!((v, failure.is_none()), (7, true));
    }

    #[test]
    fn errors_become_the_failure_value_with_a_message() {
        let (v, failure) = catch(-1, || Err(Error::OutOfMemory));
        assert_eq!(v, -1);
        let msg = failure.unwrap().message("rheap_open");
        assert_eq!(msg.as_str(), "rheap_open: out of memory");
    }

    #[test]
    fn panics_are_caught_and_named() {
        let (v, failure) = catch(122, || -> crate::error::Result<i32> {
            let row: &[u8] = &[];
            Ok(i32::from(row[3]))
        });
        assert_eq!(v, 122);
        let msg = failure.unwrap().message("rheap_write_row");
        assert!(
            msg.as_str()
                .starts_with("internal error in rheap_write_row: index out of bounds"),
            "{msg:?}"
        );
        let (v, failure) = catch(122, || -> crate::error::Result<i32> {
            panic!("formatted {}", 42)
        });
        let msg = failure.map(|f| f.message("rheap_info"));
        assert_eq!(
            (v, msg.as_ref().map(Message::as_str)),
            (122, Some("internal error in rheap_info: formatted 42"))
        );
    }

    #[test]
    fn long_messages_are_cut_at_a_character_and_end_in_nul() {
        let long = "é".repeat(400);
        let (_, failure) = catch(0, || -> crate::error::Result<i32> {
            Err(crate::error::Error::internal(long.clone()))
        });
        let msg = failure.unwrap().message("f");
        assert!(msg.as_str().len() < MESSAGE_BYTES);
        assert!(msg.as_str().starts_with("f: ") && msg.as_str().ends_with("éé"));
        assert_eq!(msg.as_c_str().to_bytes(), msg.as_str().as_bytes());
    }
}
