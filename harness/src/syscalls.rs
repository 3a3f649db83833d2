//! mmap and munmap per statement, counted by strace attached to a running server (any
//! `mariadbd` this machine can trace: a private one, or one in a clean root) over a run of
//! statements on one connection. strace slows the server down: count in a pass of its own.

use anyhow::{bail, Context, Result};
use mysql::prelude::Queryable;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long strace may take to attach to every thread of the server.
const ATTACH_TIMEOUT: Duration = Duration::from_secs(30);

/// System calls counted over a run of statements.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Syscalls {
    pub mmap: u64,
    pub munmap: u64,
    pub statements: u64,
}

impl Syscalls {
    /// (mmap + munmap) per statement.
    pub fn per_statement(&self) -> f64 {
        (self.mmap + self.munmap) as f64 / self.statements.max(1) as f64
    }
}

/// Runs `statements` on `conn`, a connection to the server whose process is `pid`, with
/// strace attached to every thread of that server. The connection (and so its server thread)
/// must exist before this is called, so that strace attaches to its thread too.
pub fn count(pid: u32, conn: &mut mysql::Conn, statements: &[String]) -> Result<Syscalls> {
    let out = tempfile_path(pid);
    let mut strace = Command::new("strace")
        .args(["-f", "-c", "-e", "trace=mmap,munmap", "-o"])
        .arg(&out)
        .args(["-p", &pid.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting strace (apt-get install strace)")?;
    let stderr = strace.stderr.take().expect("piped");
    // strace reports on stderr once it is attached; wait for that, with a deadline.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        for line in BufReader::new(stderr).lines().map_while(|l| l.ok()) {
            if line.contains("attached") {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(());
                }
            }
        }
    });
    let attached = rx.recv_timeout(ATTACH_TIMEOUT).is_ok();
    let mut run = || -> Result<()> {
        if !attached {
            bail!("strace did not attach to mariadbd (pid {pid}) within {ATTACH_TIMEOUT:?}");
        }
        for s in statements {
            conn.query_drop(s)?;
        }
        Ok(())
    };
    let ran = run();
    // SAFETY: kill(2) on the strace child we started; SIGINT makes it detach and summarise.
    unsafe { libc::kill(strace.id() as libc::pid_t, libc::SIGINT) };
    strace.wait()?;
    ran?;
    let summary = std::fs::read_to_string(&out)
        .with_context(|| format!("reading strace's summary {}", out.display()))?;
    let _ = std::fs::remove_file(&out);
    let mut counts = parse_summary(&summary);
    counts.statements = statements.len() as u64;
    Ok(counts)
}

fn tempfile_path(pid: u32) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("rheap-strace-{pid}-{}", std::process::id()))
}

/// The calls column of `strace -c` for mmap and munmap.
pub fn parse_summary(text: &str) -> Syscalls {
    let mut s = Syscalls::default();
    for line in text.lines() {
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.len() < 5 {
            continue;
        }
        let calls = cols[3].parse().unwrap_or(0);
        match cols[cols.len() - 1] {
            "mmap" => s.mmap = calls,
            "munmap" => s.munmap = calls,
            _ => {}
        }
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_strace_summary() {
        let text = "% time     seconds  usecs/call     calls    errors syscall\n\
                    ------ ----------- ----------- --------- --------- ----------------\n \
                    61.32    0.000449           6        73           munmap\n \
                    38.68    0.000283           3        74         1 mmap\n\
                    ------ ----------- ----------- --------- --------- ----------------\n\
                    100.00    0.000732           4       147         1 total\n";
        let s = super::parse_summary(text);
        assert_eq!((s.mmap, s.munmap), (74, 73));
    }
}
