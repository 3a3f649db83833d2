//! Reading a callgrind profile (`--dump-instr=yes`, with `--cache-sim=yes` for the misses): per
//! part of the process (the server, libc, rheap, ...), the instructions it ran, the cache misses
//! callgrind's simulated caches counted, and how often each instruction ran. The benchmark's
//! `footprint` tool reports the code lines a statement runs from it.
//!
//! A statement that makes a one-row temp table spends little in the engine, and what it does
//! spend there is dominated by fetching the engine's code: the statement runs a few thousand
//! lines of the server's code per call, far more than the CPU's instruction cache holds, so
//! each line of the engine's own is mostly a miss. "Lines run per statement" is that cost.
//!
//! The format: <https://valgrind.org/docs/manual/cl-format.html>. Only what the tool needs is
//! read: the `positions:` and `events:` headers, `ob=`/`fn=` (with name compression), `calls=`
//! (whose cost line is the call's inclusive cost, not the caller's own), and cost lines, whose
//! first position is an instruction address (absolute, `+n`/`-n` relative, or `*` the same).

use anyhow::{bail, ensure, Context, Result};
use rheap_harness::paths;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Options a server run under valgrind needs: InnoDB can use neither io_uring nor native AIO
/// there, nor reserve its default buffer pool's address space (8 TiB).
pub const SERVER_OPTIONS: [&str; 2] = [
    "--innodb-use-native-aio=0",
    "--innodb-buffer-pool-size-max=16M",
];

/// Writes `dir/mariadbd-under-callgrind`, a script that starts the installed mariadbd under
/// callgrind with `options`, its profiles going to `dir/out` (`out.N` for the Nth dump, and
/// `-T` for thread T with `--separate-threads=yes`); returns its path, to start a server with.
pub fn wrapper(dir: &Path, options: &str) -> Result<PathBuf> {
    let path = dir.join("mariadbd-under-callgrind");
    let script = format!(
        "#!/bin/sh\nexec valgrind --tool=callgrind {options} --callgrind-out-file={}/out {} \"$@\"\n",
        dir.display(),
        paths::mariadbd().display()
    );
    std::fs::write(&path, script)?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    Ok(path)
}

/// The profiles callgrind wrote into `dir` (the files [`wrapper`] names `out...`), with their
/// paths.
pub fn profiles(dir: &Path) -> Result<Vec<(PathBuf, String)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if !path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("out"))
        {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        out.push((path, text));
    }
    Ok(out)
}

/// `callgrind_control ARGS PID`: e.g. `-d` to dump the profile so far, `-i on` to instrument.
pub fn control(pid: u32, args: &str) -> Result<()> {
    let out = Command::new("callgrind_control")
        .args(args.split(' '))
        .arg(pid.to_string())
        .output()
        .context("running callgrind_control")?;
    ensure!(
        out.status.success(),
        "callgrind_control {args} {pid}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}

/// The events the tool reports, by their callgrind names.
const EVENTS: [&str; 7] = ["Ir", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw"];

/// Bytes of a cache line.
const LINE: u64 = 64;

/// What one part of the process cost over a profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Part {
    /// Instructions run.
    pub ir: u64,
    /// Simulated first-level instruction-cache misses.
    pub i1_misses: u64,
    /// Simulated first-level data-cache misses (reads and writes).
    pub d1_misses: u64,
    /// Simulated last-level misses (instructions and data).
    pub ll_misses: u64,
    /// How many times each instruction address ran.
    pub runs: HashMap<u64, u64>,
}

impl Part {
    /// 64-byte code lines holding an instruction that ran at least `times` times.
    pub fn lines_run(&self, times: u64) -> usize {
        let mut lines: Vec<u64> = self
            .runs
            .iter()
            .filter(|&(_, &n)| n >= times)
            .map(|(&a, _)| a / LINE)
            .collect();
        lines.sort_unstable();
        lines.dedup();
        lines.len()
    }
}

/// A profile, by part: the object file, except that code callgrind cannot place in one (it
/// reads only an object's `.text`, so rheap's `.text.hot` shows as `???`) goes to the part its
/// function's name says, via `name_part`.
#[derive(Debug, Default)]
pub struct Profile {
    pub parts: BTreeMap<String, Part>,
}

/// The part an object file's path stands for: its file name.
fn object_part(ob: &str) -> String {
    ob.rsplit('/').next().unwrap_or(ob).to_string()
}

impl Profile {
    /// Reads a profile. `name_part` names the part of a function callgrind found in no object
    /// (or None to leave it under `???`).
    pub fn parse(text: &str, name_part: impl Fn(&str) -> Option<String>) -> Result<Profile> {
        // Positions per cost line; none until a `positions:` header names instructions (the
        // format's default is source lines, which this reader cannot use).
        let mut npos = 0;
        let mut index: Vec<Option<usize>> = Vec::new();
        let mut obs: HashMap<String, String> = HashMap::new();
        let mut fns: HashMap<String, String> = HashMap::new();
        let (mut ob, mut func) = (String::from("???"), String::new());
        let mut last = 0u64;
        let mut call_cost = false;
        let mut parts: BTreeMap<String, Part> = BTreeMap::new();
        for (n, line) in text.lines().enumerate() {
            let context = || format!("line {}: {line:?}", n + 1);
            if let Some(p) = line.strip_prefix("positions:") {
                npos = p.split_whitespace().count();
                if p.split_whitespace().next() != Some("instr") {
                    bail!("profile without instruction positions (run callgrind with --dump-instr=yes)");
                }
            } else if let Some(e) = line.strip_prefix("events:") {
                let names: Vec<&str> = e.split_whitespace().collect();
                index = EVENTS
                    .iter()
                    .map(|want| names.iter().position(|n| n == want))
                    .collect();
            } else if let Some(rest) = line.strip_prefix("ob=") {
                ob = compressed(rest, &mut obs);
            } else if let Some(rest) = line.strip_prefix("cob=") {
                compressed(rest, &mut obs);
            } else if let Some(rest) = line.strip_prefix("fn=") {
                func = compressed(rest, &mut fns);
            } else if let Some(rest) = line.strip_prefix("cfn=") {
                compressed(rest, &mut fns);
            } else if line.starts_with("calls=") {
                call_cost = true;
            } else if line.starts_with(|c: char| c.is_ascii_digit() || "+-*".contains(c)) {
                if npos == 0 {
                    bail!("profile without instruction positions (run callgrind with --dump-instr=yes)");
                }
                let mut tokens = line.split_whitespace();
                let first = tokens.next().with_context(context)?;
                last = position(first, last).with_context(context)?;
                let counts: Vec<u64> = tokens
                    .skip(npos - 1)
                    .map(|t| t.parse::<u64>())
                    .collect::<std::result::Result<_, _>>()
                    .with_context(context)?;
                if std::mem::take(&mut call_cost) {
                    continue;
                }
                let ev = |i: usize| {
                    index
                        .get(i)
                        .copied()
                        .flatten()
                        .and_then(|k| counts.get(k))
                        .copied()
                        .unwrap_or(0)
                };
                let name = if ob == "???" {
                    name_part(&func).unwrap_or_else(|| ob.clone())
                } else {
                    object_part(&ob)
                };
                let part = parts.entry(name).or_default();
                part.ir += ev(0);
                part.i1_misses += ev(1);
                part.d1_misses += ev(2) + ev(3);
                part.ll_misses += ev(4) + ev(5) + ev(6);
                *part.runs.entry(last).or_default() += ev(0);
            }
        }
        if index.first().copied().flatten().is_none() {
            bail!("profile without an Ir event");
        }
        Ok(Profile { parts })
    }
}

/// A compressed name (`(id) name` defines, `(id)` refers back; a bare name is itself).
fn compressed(rest: &str, names: &mut HashMap<String, String>) -> String {
    let rest = rest.trim();
    match rest.strip_prefix('(').and_then(|r| r.split_once(')')) {
        Some((id, name)) if !name.trim().is_empty() => {
            names.insert(id.to_string(), name.trim().to_string());
            name.trim().to_string()
        }
        Some((id, _)) => names.get(id).cloned().unwrap_or_else(|| "???".into()),
        None => rest.to_string(),
    }
}

/// An instruction position: absolute (hex with `0x`, else decimal), relative, or the same.
fn position(token: &str, last: u64) -> Result<u64> {
    Ok(match token.as_bytes()[0] {
        b'*' => last,
        b'+' => last + parse_number(&token[1..])?,
        b'-' => last
            .checked_sub(parse_number(&token[1..])?)
            .context("position before 0")?,
        _ => parse_number(token)?,
    })
}

fn parse_number(t: &str) -> Result<u64> {
    Ok(match t.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16)?,
        None => t.parse()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small profile in callgrind's format: two objects, a name only callgrind's symbol table
    /// knows (`???`), compressed names, relative positions and a call.
    const PROFILE: &str = "\
version: 1
creator: callgrind-3.19.0
positions: instr line
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
ob=(1) /usr/sbin/mariadbd
fl=(1) ???
fn=(1) handler::ha_write_tmp_row
0x1000 0 4 1 0 1 0 0 0 0 0
+4 * 4 0 0 0 1 0 0 1 0
calls=4 0x2000 0
* * 90 10 10 9 1 1 2 2 1
+60 * 4
ob=(2) /opt/plugin/ha_rheap.so
fn=(2) rheap::table::Table::renew
0x100 0 4 0 0 1
ob=(3) ???
fn=(3) rheap_write_row
0x7000000 0 4
+64 0 4 1 1 1 1 1 1 1 1
fn=(4) 0x00000000cafe
0x9000000 0 2
ob=(1)
fn=(1)
0x1000 0 1
summary: 27
";

    fn part_of(func: &str) -> Option<String> {
        func.contains("rheap").then(|| "ha_rheap.so".to_string())
    }

    #[test]
    fn costs_go_to_their_parts() {
        let p = Profile::parse(PROFILE, part_of).unwrap();
        let names: Vec<&str> = p.parts.keys().map(|s| s.as_str()).collect();
        assert_eq!(names, ["???", "ha_rheap.so", "mariadbd"]);
        let server = &p.parts["mariadbd"];
        // The call's own line (90 instructions, inclusive) is not the caller's.
        assert_eq!(server.ir, 4 + 4 + 4 + 1);
        assert_eq!(server.i1_misses, 1);
        assert_eq!(server.d1_misses, 1);
        assert_eq!(server.ll_misses, 1);
        let rheap = &p.parts["ha_rheap.so"];
        assert_eq!(rheap.ir, 4 + 4 + 4);
        assert_eq!(rheap.i1_misses, 2);
        assert_eq!(rheap.d1_misses, 2);
        assert_eq!(rheap.ll_misses, 3);
        assert_eq!(p.parts["???"].ir, 2);
        assert_eq!(p.parts.values().map(|p| p.ir).sum::<u64>(), 27);
    }

    #[test]
    fn lines_count_addresses_that_ran_often_enough() {
        let p = Profile::parse(PROFILE, part_of).unwrap();
        let server = &p.parts["mariadbd"];
        // 0x1000 ran 4 + 1 times, 0x1004 4 times (one line), 0x1040 4 times (another).
        assert_eq!(server.runs[&0x1000], 5);
        assert_eq!(server.lines_run(4), 2);
        assert_eq!(server.lines_run(5), 1);
        assert_eq!(server.lines_run(6), 0);
        // rheap: 0x100 in ha_rheap.so, and 0x7000000 and 0x7000040 under ??? by name.
        assert_eq!(p.parts["ha_rheap.so"].lines_run(1), 3);
    }

    #[test]
    fn the_wrapper_starts_the_server_under_callgrind() {
        let dir = tempfile::tempdir().unwrap();
        let script = wrapper(dir.path(), "--dump-instr=yes").unwrap();
        let text = std::fs::read_to_string(&script).unwrap();
        assert!(text.starts_with("#!/bin/sh\nexec valgrind --tool=callgrind --dump-instr=yes "));
        assert!(text.contains(&format!(
            "--callgrind-out-file={}/out ",
            dir.path().display()
        )));
        assert!(text.trim_end().ends_with("\"$@\""), "{text}");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&script).unwrap().permissions().mode() & 0o111,
            0o111
        );
    }

    #[test]
    fn a_profile_without_instruction_positions_is_refused() {
        let e = Profile::parse("positions: line\nevents: Ir\n", part_of).unwrap_err();
        assert!(e.to_string().contains("--dump-instr=yes"), "{e}");
        let e = Profile::parse("events: Ir\n0x10 5\n", part_of).unwrap_err();
        assert!(e.to_string().contains("--dump-instr=yes"), "{e}");
        let e = Profile::parse("positions: instr\nevents: Dr\n", part_of).unwrap_err();
        assert!(e.to_string().contains("Ir"), "{e}");
    }
}
