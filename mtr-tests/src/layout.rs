//! The plugin's code layout after linking (BOLT), the last step of its build.
//!
//! A statement that makes a one-row temp table runs a few hundred of the engine's 64-byte code
//! lines, and fetches most of them anew each time: the server's own code between two calls into
//! the engine is many times what the instruction cache holds. What that costs grows with the
//! lines and pages the engine's code spans, not with its instructions. The profile-guided
//! build ([`pgo`]) orders blocks within each function, but the blocks one kind of statement
//! runs stay interleaved with those of others in large functions (`rheap_write_row` is 24 KB,
//! of which a SHOW TABLE STATUS runs 1.4 KB over four pages), and the functions lie where the
//! linker put them. `llvm-bolt` rewrites the linked library from a profile of where it ran:
//! the blocks that ran go first in their function, ordered so that the most frequent paths fall
//! through, the ones that did not move out of the way, and functions that ran are gathered in
//! one region.
//!
//! [`optimise`] takes two steps after the profile-guided build, which links with
//! `--emit-relocs` so that BOLT can move code:
//! 1. training: a private server loads that library under callgrind (which counts every
//!    instruction it runs: no sampling, and no hardware counters, which virtual machines often
//!    lack) and runs the profile-guided build's training statements [`PASSES`] times, with a
//!    profile per statement;
//! 2. the counts, each statement's weighing the same, become BOLT's sample profile (a `no_lbr`
//!    fdata file: function, offset, count), and `llvm-bolt` writes the library the plugin
//!    directory gets.
//!
//! Training runs again only when the library it lays out changed (its hash is kept beside the
//! result). Without `llvm-bolt` (Debian's `bolt-16`, which ci/setup installs) or valgrind, or with
//! `RHEAP_LAYOUT=0`, [`tool`] says why and the plugin is the profile-guided library as linked.
//!
//! [`pgo`]: crate::pgo

use crate::callgrind::{self, Profile};
use crate::{paths, pgo, plugin, Server};
use anyhow::{bail, Context, Result};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// How many times the training runs the profile-guided build's pass (under callgrind each one
/// takes seconds; the counts are exact, so a few give the proportions).
pub const PASSES: usize = 3;

/// The linker flag the library needs for BOLT to move its code.
pub const LINK_FLAG: &str = "-Clink-arg=-Wl,--emit-relocs";

/// The names `llvm-bolt` goes by: Debian's versioned one first.
const BOLT: [&str; 2] = ["llvm-bolt-16", "llvm-bolt"];

/// `llvm-bolt`, or why the plugin goes without a layout step.
pub fn tool() -> std::result::Result<PathBuf, String> {
    if std::env::var("RHEAP_LAYOUT").is_ok_and(|v| v == "0") {
        return Err("RHEAP_LAYOUT=0".into());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let bolt = BOLT
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
        .find(|p| p.is_file())
        .ok_or("no llvm-bolt on PATH (`apt-get install bolt-16` installs it; ci/setup does)")?;
    let valgrind = Command::new("valgrind").arg("--version").output();
    if !valgrind.is_ok_and(|o| o.status.success()) {
        return Err("no valgrind for the layout's training (`apt-get install valgrind`)".into());
    }
    Ok(bolt)
}

/// The two steps above, for `lib` (linked with [`LINK_FLAG`]); returns the laid-out library.
pub fn optimise(bolt: &Path, lib: &Path) -> Result<PathBuf> {
    let dir = paths::target().join("layout");
    std::fs::create_dir_all(&dir)?;
    let _lock = pgo::Lock::take(&dir.join("lock"))?;
    let out = dir.join("librheap.so");
    let stamp = dir.join("made-from");
    let made_from = format!("{:016x}", pgo::hash_file(lib)?);
    if out.is_file() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(&made_from) {
        step("1/2 training: up to date (the library to lay out is unchanged)");
        step("2/2 llvm-bolt: up to date (target/layout/librheap.so)");
        return Ok(out);
    }
    step(&format!(
        "1/2 training: a private server under callgrind runs pgo/pass.sql {PASSES} times"
    ));
    let runs = train(lib, &dir)?;
    let fdata = dir.join("profile.fdata");
    let (functions, places) = write_profile(lib, &runs, &fdata)?;
    step(&format!(
        "2/2 llvm-bolt with {places} instructions of {functions} functions that ran \
         (target/layout/profile.fdata)"
    ));
    let _ = std::fs::remove_file(&stamp);
    let tmp = dir.join(".librheap.so.tmp");
    let run = Command::new(bolt)
        .arg(lib)
        .arg("-o")
        .arg(&tmp)
        .arg(format!("-data={}", fdata.display()))
        .args([
            "-reorder-blocks=ext-tsp",
            "-reorder-functions=hfsort",
            "-split-functions",
            "-split-all-cold",
            "-split-eh",
            "-update-debug-sections",
        ])
        .output()
        .with_context(|| format!("running {}", bolt.display()))?;
    if !run.status.success() {
        bail!(
            "{} failed ({}):\n{}{}",
            bolt.display(),
            run.status,
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
    }
    // How much of the profile BOLT matched to its functions, e.g. "251 out of 1012 functions
    // in the binary (24.8%) have non-empty execution profile".
    if let Some(matched) = String::from_utf8_lossy(&run.stdout)
        .lines()
        .find(|l| l.contains("have non-empty execution profile"))
    {
        step(&format!(
            "2/2 {}",
            matched.trim_start_matches("BOLT-INFO: ")
        ));
    }
    std::fs::rename(&tmp, &out)?;
    std::fs::write(&stamp, made_from)?;
    Ok(out)
}

fn step(what: &str) {
    eprintln!("[plugin] layout {what}");
}

/// Runs the training statements on a server that loads `lib` under callgrind; returns how many
/// times each instruction of `lib` ran, by its address in the file.
fn train(lib: &Path, dir: &Path) -> Result<HashMap<u64, u64>> {
    let profiles = dir.join("callgrind");
    let _ = std::fs::remove_dir_all(&profiles);
    std::fs::create_dir_all(&profiles)?;
    // A profile per statement: callgrind writes one each time the server finishes a command
    // (no `callgrind_control`, which would need to ptrace the server: a container may not).
    let wrapper = callgrind::wrapper(
        &profiles,
        "--dump-instr=yes '--dump-after=dispatch_command*'",
    )?;
    let mut server = Server::start(crate::server::Options {
        plugin_dir: Some(plugin::stage(lib, &dir.join("plugin"))?),
        args: vec![
            "--plugin-load-add=ha_rheap.so".into(),
            "--rheap-takeover=INTERNAL".into(),
        ]
        .into_iter()
        .chain(callgrind::SERVER_OPTIONS.iter().map(|s| s.to_string()))
        .collect(),
        mariadbd: wrapper,
    })?;
    let pid = server.pid().context("the training server's pid")?;
    let mapped = mapping(pid, "ha_rheap.so")?;
    // Each statement's profile weighs the same below: a GROUP BY over a few hundred rows would
    // otherwise outweigh a SHOW's once-per-statement path by as much, and the layout would
    // interleave the latter with every per-row path.
    pgo::run_training(&mut server, PASSES)?;
    let mut runs = HashMap::new();
    for (path, text) in callgrind::profiles(&profiles)? {
        let profile = Profile::parse(&text, |_| None)
            .with_context(|| format!("reading {}", path.display()))?;
        add_runs(&own_runs(&profile, &mapped), &mut runs);
    }
    if runs.is_empty() {
        bail!(
            "callgrind counted nothing of ha_rheap.so in {}",
            profiles.display()
        );
    }
    Ok(runs)
}

/// Where a library is loaded: its first address (where its file's start is mapped, which is
/// what its addresses are relative to) and the end of its last mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mapped {
    base: u64,
    end: u64,
}

/// Where process `pid` has the file named `name` mapped, from `/proc/<pid>/maps`.
fn mapping(pid: u32, name: &str) -> Result<Mapped> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))?;
    parse_mapping(&maps, name).with_context(|| format!("process {pid} has no {name} mapped"))
}

fn parse_mapping(maps: &str, name: &str) -> Option<Mapped> {
    let mut found: Option<Mapped> = None;
    for line in maps.lines() {
        let mut f = line.split_whitespace();
        let (Some(range), Some(_), Some(offset), Some(_), Some(_), Some(path)) =
            (f.next(), f.next(), f.next(), f.next(), f.next(), f.next())
        else {
            continue;
        };
        if Path::new(path).file_name().and_then(|n| n.to_str()) != Some(name) {
            continue;
        }
        let (start, end) = range.split_once('-')?;
        let (start, end) = (
            u64::from_str_radix(start, 16).ok()?,
            u64::from_str_radix(end, 16).ok()?,
        );
        let offset = u64::from_str_radix(offset, 16).ok()?;
        let base = start.checked_sub(offset)?;
        let m = found.get_or_insert(Mapped { base, end });
        m.end = m.end.max(end);
    }
    found
}

/// The runs of the library's instructions in `profile`, by address in the file: those
/// callgrind placed in its object, and those it placed in none (code outside the `.text`
/// section it reads, e.g. `.text.hot`), whose addresses are the process's.
fn own_runs(profile: &Profile, mapped: &Mapped) -> HashMap<u64, u64> {
    let mut runs = HashMap::new();
    for (name, part) in &profile.parts {
        for (&at, &n) in &part.runs {
            let at = if name == "ha_rheap.so" {
                at
            } else if name == "???" && (mapped.base..mapped.end).contains(&at) {
                at - mapped.base
            } else {
                continue;
            };
            if n > 0 {
                *runs.entry(at).or_default() += n;
            }
        }
    }
    runs
}

/// What one profile (a statement's) adds to the total: its runs scaled to [`WEIGHT`] in all,
/// an instruction that ran counting at least once.
fn add_runs(one: &HashMap<u64, u64>, total: &mut HashMap<u64, u64>) {
    let sum: u64 = one.values().sum();
    if sum == 0 {
        return;
    }
    for (&at, &n) in one {
        let scaled = (n as u128 * WEIGHT as u128 / sum as u128) as u64;
        *total.entry(at).or_default() += scaled.max(1);
    }
}

/// What each statement's profile weighs.
const WEIGHT: u64 = 1_000_000;

/// Writes `runs` as BOLT's sample profile (`no_lbr`): per instruction that ran, its function's
/// name as BOLT names it, its offset there and its count. Returns the functions and
/// instructions written.
fn write_profile(lib: &Path, runs: &HashMap<u64, u64>, out: &Path) -> Result<(usize, usize)> {
    let bytes = std::fs::read(lib).with_context(|| format!("reading {}", lib.display()))?;
    let functions = functions(&bytes).with_context(|| format!("reading {}", lib.display()))?;
    let text = fdata(&functions, runs);
    let used = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split(' ').nth(1))
        .collect::<std::collections::HashSet<_>>()
        .len();
    let places = text.lines().count() - 1;
    std::fs::write(out, &text)?;
    Ok((used, places))
}

/// A function of the library: its address, size and name as BOLT knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Function {
    at: u64,
    size: u64,
    name: String,
}

/// The library's functions, by address. BOLT names a global symbol by its name and a local one
/// `name/N`, N counting the local symbols of that name in address order.
fn functions(elf: &[u8]) -> Result<Vec<Function>> {
    use object::{Object, ObjectSymbol, SymbolKind};
    let file = object::File::parse(elf)?;
    let mut symbols: Vec<(u64, u64, &str, bool)> = file
        .symbols()
        .filter(|s| s.kind() == SymbolKind::Text && s.is_definition())
        .filter_map(|s| Some((s.address(), s.size(), s.name().ok()?, s.is_global())))
        .collect();
    symbols.sort_by_key(|s| s.0);
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut out = Vec::new();
    for (at, size, name, global) in symbols {
        let name = if global {
            name.to_string()
        } else {
            let n = seen.entry(name).or_default();
            *n += 1;
            format!("{name}/{n}")
        };
        if size > 0 {
            out.push(Function { at, size, name });
        }
    }
    Ok(out)
}

/// The `no_lbr` fdata text of `runs` over `functions` (sorted by address); instructions in no
/// function are left out.
fn fdata(functions: &[Function], runs: &HashMap<u64, u64>) -> String {
    let mut at: Vec<(&u64, &u64)> = runs.iter().collect();
    at.sort();
    let mut text = String::from("no_lbr cycles:u\n");
    for (&a, &n) in at {
        let i = functions.partition_point(|f| f.at <= a);
        let Some(f) = i.checked_sub(1).map(|i| &functions[i]) else {
            continue;
        };
        if a < f.at + f.size {
            let _ = writeln!(text, "1 {} {:x} {n}", f.name, a - f.at);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_is_found_where_its_file_starts() {
        let maps = "\
7f0000000000-7f0000010000 r--p 00000000 08:01 42 /srv/plugin/ha_rheap.so
7f0000010000-7f0000090000 r-xp 00010000 08:01 42 /srv/plugin/ha_rheap.so
7f00000a0000-7f00000b0000 rw-p 00090000 08:01 42 /srv/plugin/ha_rheap.so
7f00000b0000-7f00000c0000 r-xp 00000000 08:01 43 /usr/lib/ha_rheap.so.bak
7f1000000000-7f1000001000 rw-p 00000000 00:00 0
";
        assert_eq!(
            parse_mapping(maps, "ha_rheap.so"),
            Some(Mapped {
                base: 0x7f00_0000_0000,
                end: 0x7f00_000b_0000
            })
        );
        assert_eq!(parse_mapping(maps, "ha_other.so"), None);
    }

    #[test]
    fn runs_become_function_offsets() {
        let functions = vec![
            Function {
                at: 0x100,
                size: 0x20,
                name: "rheap_write_row".into(),
            },
            Function {
                at: 0x200,
                size: 0x10,
                name: "_ZN5rheap5table5Table5renew17h0E/1".into(),
            },
        ];
        let runs = HashMap::from([(0x104, 7), (0x100, 7), (0x20c, 3), (0x150, 9), (0x50, 1)]);
        assert_eq!(
            fdata(&functions, &runs),
            "no_lbr cycles:u\n\
             1 rheap_write_row 0 7\n\
             1 rheap_write_row 4 7\n\
             1 _ZN5rheap5table5Table5renew17h0E/1 c 3\n",
            "0x150 and 0x50 lie in no function"
        );
    }

    #[test]
    fn code_placed_in_no_object_counts_by_its_address_in_the_file() {
        let text = "\
positions: instr
events: Ir
ob=(1) /srv/plugin/ha_rheap.so
fn=(1) rheap_close
0x2000 4
ob=(2) ???
fn=(2) rheap_write_row
0x7f0000012000 5
fn=(3) elsewhere
0x9000 6
";
        let profile = Profile::parse(text, |_| None).unwrap();
        let mapped = Mapped {
            base: 0x7f00_0000_0000,
            end: 0x7f00_000b_0000,
        };
        assert_eq!(
            own_runs(&profile, &mapped),
            HashMap::from([(0x2000, 4), (0x12000, 5)])
        );
    }

    #[test]
    fn each_profile_weighs_the_same() {
        let mut total = HashMap::new();
        // A statement that ran one instruction a thousand times, another that ran two once.
        add_runs(&HashMap::from([(0x10, 1000)]), &mut total);
        add_runs(&HashMap::from([(0x10, 1), (0x20, 3)]), &mut total);
        add_runs(&HashMap::new(), &mut total);
        assert_eq!(
            total,
            HashMap::from([(0x10, WEIGHT + WEIGHT / 4), (0x20, WEIGHT * 3 / 4)])
        );
        // A rare instruction of a long statement still counts as run.
        let mut t = HashMap::new();
        add_runs(
            &HashMap::from([(0x10, u64::from(u32::MAX)), (0x20, 1)]),
            &mut t,
        );
        assert_eq!(t[&0x20], 1);
    }

    #[test]
    fn local_symbols_are_numbered_as_bolt_numbers_them() {
        // This test binary itself: every local function named once is `name/1`, and a global
        // one keeps its name.
        let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let functions = functions(&exe).unwrap();
        assert!(functions.windows(2).all(|w| w[0].at <= w[1].at));
        assert!(functions.iter().any(|f| f.name == "main"), "main is global");
        assert!(
            functions.iter().any(|f| f.name.ends_with("/1")),
            "some local function"
        );
        assert!(functions.iter().all(|f| !f.name.ends_with("/0")));
    }
}
