//! The version rule: a storage engine is accepted only by a server of exactly the
//! `MYSQL_VERSION_ID` it was built with, so the headers and the server must agree.
//!
//! Also compiled into rheap-sys's unit tests (src/lib.rs), which exercise the parsers.

use std::fmt;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl Version {
    /// `MYSQL_VERSION_ID`: 10.11.18 is 101118.
    pub fn id(&self) -> u32 {
        self.major * 10000 + self.minor * 100 + self.patch
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{}.{} (MYSQL_VERSION_ID {})",
            self.major,
            self.minor,
            self.patch,
            self.id()
        )
    }
}

/// From a source tree's `VERSION` file (`MYSQL_VERSION_MAJOR=10` lines).
pub fn parse_version_file(text: &str) -> Option<Version> {
    let get = |key: &str| -> Option<u32> {
        text.lines().find_map(|l| {
            l.trim()
                .strip_prefix(key)?
                .strip_prefix('=')?
                .trim()
                .parse()
                .ok()
        })
    };
    Some(Version {
        major: get("MYSQL_VERSION_MAJOR")?,
        minor: get("MYSQL_VERSION_MINOR")?,
        patch: get("MYSQL_VERSION_PATCH")?,
    })
}

/// From a generated `mysql_version.h` (`#define MYSQL_VERSION_ID 101118`).
pub fn parse_version_header(text: &str) -> Option<Version> {
    let id: u32 = text.lines().find_map(|l| {
        let mut w = l.split_whitespace();
        (w.next()? == "#define" && w.next()? == "MYSQL_VERSION_ID")
            .then(|| w.next()?.parse().ok())?
    })?;
    Some(Version {
        major: id / 10000,
        minor: id / 100 % 100,
        patch: id % 100,
    })
}

/// From `mariadbd --version` (`mariadbd  Ver 10.11.18-MariaDB-0+deb12u1 for debian-linux-gnu`).
pub fn parse_server_version(text: &str) -> Option<Version> {
    let v = text.split_whitespace().skip_while(|w| *w != "Ver").nth(1)?;
    let mut n = v
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().ok());
    Some(Version {
        major: n.next()??,
        minor: n.next()??,
        patch: n.next()??,
    })
}

/// The version all three agree on, or a message naming each one that differs.
pub fn check(src: &Path, generated: &Path, mariadbd: &Path) -> Result<Version, String> {
    let read = |p: &Path| {
        std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
    };
    let source = parse_version_file(&read(&src.join("VERSION"))?)
        .ok_or_else(|| format!("no version in {}", src.join("VERSION").display()))?;
    let header_path = generated.join("mysql_version.h");
    let header = parse_version_header(&read(&header_path)?)
        .ok_or_else(|| format!("no MYSQL_VERSION_ID in {}", header_path.display()))?;
    let out = std::process::Command::new(mariadbd)
        .arg("--version")
        .output()
        .map_err(|e| {
            format!(
                "cannot run {} --version ({e}); install the server (ci/setup) or set MARIADBD",
                mariadbd.display()
            )
        })?;
    let server = parse_server_version(&String::from_utf8_lossy(&out.stdout)).ok_or_else(|| {
        format!(
            "no version in the output of {} --version",
            mariadbd.display()
        )
    })?;
    if source != server {
        return Err(format!(
            "the server headers in {} are MariaDB {source}, but the installed server {} is {server}: \
             the server would refuse the plugin. Point MARIADB_SOURCE_DIR at a source tree of \
             {server} (ci/setup fetches one), or set MARIADBD to a server of {source}.",
            src.display(),
            mariadbd.display()
        ));
    }
    if header != server {
        return Err(format!(
            "the generated headers in {} are MariaDB {header}, but the installed server {} is \
             {server}: install libmariadbd-dev of the server's version (ci/setup does), or set \
             MARIADB_SERVER_INCLUDE_DIR.",
            generated.display(),
            mariadbd.display()
        ));
    }
    Ok(server)
}
