//! A fresh, minimal Debian 12 root to install into and run in, as a new machine or a
//! `debian:bookworm` container would be: `debootstrap --variant=minbase bookworm` (what the
//! official image is made of), made once into `target/cleanroom/bookworm` and copied afresh
//! into `target/cleanroom/<name>` for every use. Commands run in it through `chroot`, as root,
//! with `/proc`, `/sys` and a `/dev/shm` mounted while the [`Root`] lives; when it is dropped,
//! whatever still runs in it is killed and the mounts go (the copy stays for a look until the
//! next run). It shares this machine's network: apt reaches Debian's mirrors from it.
//!
//! Environment: `RHEAP_DEBIAN_MIRROR` (default `http://deb.debian.org/debian`) and
//! `RHEAP_DEBIAN_SECURITY_MIRROR` (default `http://deb.debian.org/debian-security`).

use anyhow::{Context, Result};
use rheap_harness::paths;
pub use rheap_harness::process::{output, tail};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The suite roots are made of.
pub const SUITE: &str = "bookworm";
/// The PATH commands in a root get (Debian's root default).
const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// A fresh copy of the minimal root, with its file systems mounted while it lives.
pub struct Root {
    dir: PathBuf,
    mounts: Vec<PathBuf>,
}

impl Root {
    /// Makes the cached base root if there is none, and a fresh copy of it named `name`;
    /// also says which of the two it did.
    pub fn fresh(name: &str) -> Result<(Root, String)> {
        let top = paths::target().join("cleanroom");
        let base = top.join(SUITE);
        let stamp = top.join(format!("{SUITE}.ok"));
        let mirror = mirror();
        let mut how = format!("base {} cached", base.display());
        if std::fs::read_to_string(&stamp).ok().as_deref() != Some(mirror.as_str()) {
            let partial = top.join(format!("{SUITE}.partial"));
            remove_root(&partial)?;
            remove_root(&base)?;
            std::fs::create_dir_all(&top)?;
            println!("[root] debootstrap --variant=minbase {SUITE} from {mirror} (about a minute)");
            let t = Instant::now();
            output(
                Command::new("debootstrap")
                    .args(["--variant=minbase", SUITE])
                    .arg(&partial)
                    .arg(&mirror),
            )
            .context("debootstrap (apt-get install debootstrap; ci/setup does)")?;
            std::fs::rename(&partial, &base)?;
            std::fs::write(&stamp, &mirror)?;
            how = format!("debootstrap made {} in {:.0?}", base.display(), t.elapsed());
        }
        let dir = top.join(name);
        remove_root(&dir)?;
        output(Command::new("cp").args(["-a"]).arg(&base).arg(&dir))?;
        let mut root = Root {
            dir,
            mounts: Vec::new(),
        };
        root.mount(&["-t", "proc", "proc"], "proc")?;
        root.mount(&["-t", "sysfs", "-o", "ro", "sysfs"], "sys")?;
        root.mount(&["-t", "tmpfs", "-o", "mode=1777", "shm"], "dev/shm")?;
        // What an installed machine or a container on this network has and a debootstrap root
        // lacks: a resolver, a localhost (mysql-test-run listens on it), and the local CA
        // certificates this machine trusts (a network that inspects TLS needs them on every
        // machine; package ca-certificates adds them to the root's store when it is installed).
        std::fs::copy("/etc/resolv.conf", root.path("etc/resolv.conf"))?;
        let local_cas = Path::new("/usr/local/share/ca-certificates");
        for ca in std::fs::read_dir(local_cas).into_iter().flatten().flatten() {
            let to = root.path("usr/local/share/ca-certificates");
            std::fs::create_dir_all(&to)?;
            std::fs::copy(ca.path(), to.join(ca.file_name()))?;
        }
        std::fs::write(
            root.path("etc/hosts"),
            "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n",
        )?;
        let security = std::env::var("RHEAP_DEBIAN_SECURITY_MIRROR")
            .unwrap_or_else(|_| "http://deb.debian.org/debian-security".into());
        std::fs::write(
            root.path("etc/apt/sources.list"),
            format!(
                "deb {mirror} {SUITE} main\ndeb {mirror} {SUITE}-updates main\n\
                 deb {security} {SUITE}-security main\n"
            ),
        )?;
        Ok((root, how))
    }

    fn mount(&mut self, how: &[&str], at: &str) -> Result<()> {
        let path = self.path(at);
        std::fs::create_dir_all(&path)?;
        output(Command::new("mount").args(how).arg(&path))?;
        self.mounts.push(path);
        Ok(())
    }

    /// `rel` (relative to the root) as a path of this machine.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel.trim_start_matches('/'))
    }

    /// `program args...` run in the root (chroot) with an environment of its own, as a login
    /// on that machine would have: Debian's PATH, root's HOME, a UTF-8 locale, and nothing of
    /// this process's (whose variables, such as `RHEAP_PLUGIN_DIR`, name paths of this
    /// machine); the caller may add more, runs it and reads its output.
    pub fn command(&self, program: &str, args: &[&str]) -> Command {
        let mut c = Command::new("chroot");
        c.arg(&self.dir)
            .arg(program)
            .args(args)
            .env_clear()
            .env("PATH", PATH)
            .env("HOME", "/root")
            .env("LC_ALL", "C.UTF-8");
        c
    }

    /// Runs `script` with `/bin/sh` in the root; its standard output, or an error with both
    /// streams.
    pub fn sh(&self, script: &str) -> Result<String> {
        output(&mut self.command("/bin/sh", &["-c", script]))
    }

    /// Copies `file` into the root's /tmp; returns its path inside the root.
    pub fn copy_in(&self, file: &Path) -> Result<String> {
        let name = file.file_name().context("a file name")?.to_string_lossy();
        std::fs::copy(file, self.path("tmp").join(&*name))?;
        Ok(format!("/tmp/{name}"))
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        kill_processes_in(&self.dir);
        for m in self.mounts.iter().rev() {
            let _ = output(Command::new("umount").arg(m));
        }
    }
}

/// Kills every process whose root directory is `dir` (what a container's stop does).
fn kill_processes_in(dir: &Path) {
    let Ok(dir) = dir.canonicalize() else { return };
    for _ in 0..50 {
        let mut found = false;
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            if std::fs::read_link(entry.path().join("root")).is_ok_and(|r| r == dir) {
                found = true;
                // SAFETY: kill(2) with a pid read from /proc and a valid signal.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
        if !found {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// `RHEAP_DEBIAN_MIRROR`, else deb.debian.org.
fn mirror() -> String {
    std::env::var("RHEAP_DEBIAN_MIRROR").unwrap_or_else(|_| "http://deb.debian.org/debian".into())
}

/// Removes a root directory left by an earlier run: kills what still runs in it, unmounts what
/// is mounted under it, and never crosses into another file system.
fn remove_root(dir: &Path) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    kill_processes_in(dir);
    let prefix = format!("{}/", dir.canonicalize()?.display());
    let mounts = std::fs::read_to_string("/proc/self/mounts")?;
    let mut under: Vec<&str> = mounts
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .filter(|m| m.starts_with(&prefix))
        .collect();
    under.sort_by_key(|m| std::cmp::Reverse(m.len()));
    for m in under {
        output(Command::new("umount").arg(m))?;
    }
    output(
        Command::new("rm")
            .args(["-rf", "--one-file-system"])
            .arg(dir),
    )?;
    Ok(())
}
