//! What every `extern "C"` entry point does with its body: run it, and turn a panic into a
//! failure value plus a message, so that no panic ever unwinds into the server's C++.

use crate::error::Result;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f`; on an error or a panic returns `on_failure` and what to log about it.
pub fn catch<T>(name: &str, on_failure: T, f: impl FnOnce() -> Result<T>) -> (T, Option<String>) {
    // AssertUnwindSafe: after a panic the entry point returns an error and the server
    // abandons the statement; shared tables detect a panic mid-change through their poisoned
    // lock (ffi/share.rs) and refuse further use instead of reading a half-made change.
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => (v, None),
        Ok(Err(e)) => (on_failure, Some(format!("{name}: {e}"))),
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            (
                on_failure,
                Some(format!("internal error in {name}: {what}")),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::catch;
    use crate::error::Error;

    #[test]
    fn values_pass_through() {
        assert_eq!(catch("f", -1, || Ok(7)), (7, None));
    }

    #[test]
    fn errors_become_the_failure_value_with_a_message() {
        let (v, msg) = catch("rheap_open", -1, || Err(Error::OutOfMemory));
        assert_eq!(v, -1);
        assert_eq!(msg.as_deref(), Some("rheap_open: out of memory"));
    }

    #[test]
    fn panics_are_caught_and_named() {
        let (v, msg) = catch("rheap_write_row", 122, || -> crate::error::Result<i32> {
            let row: &[u8] = &[];
            Ok(i32::from(row[3]))
        });
        assert_eq!(v, 122);
        let msg = msg.unwrap();
        assert!(
            msg.starts_with("internal error in rheap_write_row: index out of bounds"),
            "{msg}"
        );
        let (v, msg) = catch("rheap_info", 122, || -> crate::error::Result<i32> {
            panic!("formatted {}", 42)
        });
        assert_eq!(
            (v, msg.as_deref()),
            (122, Some("internal error in rheap_info: formatted 42"))
        );
    }
}
