//! mmap and munmap per statement of a configuration, counted in a short pass of its own,
//! outside the timed rounds (strace slows the server down): `rheap_harness::syscalls`.

use crate::system::Configuration;
use anyhow::{Context, Result};
pub use rheap_harness::syscalls::Syscalls;

/// Runs `statements` on one new connection with strace attached to the configuration's server.
pub fn count(config: &Configuration, statements: &[String]) -> Result<Syscalls> {
    let pid = config
        .server
        .pid()
        .context("the server of the configuration is not running")?;
    // The connection (and so its server thread) exists before strace attaches.
    let mut conn = config.conn()?;
    rheap_harness::syscalls::count(pid, &mut conn, statements)
}
