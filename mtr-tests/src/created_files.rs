//! The files created in one directory while something runs, seen through Linux's inotify: a
//! file made and deleted within a statement (an on-disk temporary table) is still counted.

use anyhow::{bail, Context, Result};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Watches one directory for files created in it, from [`CreatedFiles::watch`] on.
pub struct CreatedFiles {
    fd: libc::c_int,
}

impl CreatedFiles {
    /// Starts watching `dir`.
    pub fn watch(dir: &Path) -> Result<CreatedFiles> {
        // SAFETY: no pointer arguments; the descriptor is owned by the value returned.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            bail!("inotify_init1: {}", std::io::Error::last_os_error());
        }
        let watcher = CreatedFiles { fd };
        let path = CString::new(dir.as_os_str().as_bytes()).context("a path with a NUL byte")?;
        // SAFETY: `path` is NUL-terminated and lives across the call.
        if unsafe { libc::inotify_add_watch(fd, path.as_ptr(), libc::IN_CREATE) } < 0 {
            bail!(
                "watching {}: {}",
                dir.display(),
                std::io::Error::last_os_error()
            );
        }
        Ok(watcher)
    }

    /// The names of the files created since the last call (or since the watch began).
    pub fn names(&mut self) -> Result<Vec<String>> {
        let mut names = Vec::new();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            // SAFETY: `buf` is writable for its whole length.
            let n = unsafe { libc::read(self.fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::WouldBlock {
                    return Ok(names);
                }
                bail!("reading inotify events: {e}");
            }
            let mut at = 0;
            let header = std::mem::size_of::<libc::inotify_event>();
            while at + header <= n as usize {
                // SAFETY: the kernel wrote a whole event header at `at` (read_unaligned: the
                // buffer has no alignment promise).
                let event: libc::inotify_event =
                    unsafe { std::ptr::read_unaligned(buf.as_ptr().add(at).cast()) };
                let name = &buf[at + header..at + header + event.len as usize];
                let name = name.split(|&b| b == 0).next().unwrap_or_default();
                names.push(String::from_utf8_lossy(name).into_owned());
                at += header + event.len as usize;
            }
        }
    }
}

impl Drop for CreatedFiles {
    fn drop(&mut self) {
        // SAFETY: the descriptor is ours, closed once.
        unsafe { libc::close(self.fd) };
    }
}
