//! Code run per statement, measured: the benchmark's workloads on each system, one connection,
//! under callgrind with its cache simulation, and per statement the instructions, the code
//! lines run and the simulated cache misses of each part of the server process (mariadbd, libc,
//! rheap). Where the QPS benchmark says *that* a system is slower on a workload, this says
//! where its statements differ.
//!
//! ```text
//! cargo run --release -p rheap-bench --bin footprint -- \
//!     [--workload NAME]... [--system NAME]... [--size 16M] [--iterations N]
//! ```
//!
//! Defaults (`--help` lists them, and the workloads and systems there are): the five workloads
//! the acceptance names, systems `stock` and `rheap`, size 16M, 2 iterations (after one
//! unmeasured). Needs valgrind (`apt-get install valgrind`). Each run keeps its profiles in
//! `target/footprint/<workload>.<system>/` for `callgrind_annotate`.
//!
//! "Code lines" counts the 64-byte lines holding an instruction that ran at least once per
//! statement: the code a statement fetches. The caches simulated are a core's of the Xeon the
//! acceptance runs were measured on: 32 KiB instruction and 48 KiB data first level, and its
//! 2 MiB second level as callgrind's last level.

use anyhow::{ensure, Context, Result};
use clap::builder::TypedValueParser;
use clap::Parser;
use mysql::prelude::Queryable;
use rheap_bench::callgrind::{self, Part, Profile};
use rheap_bench::report::ACCEPTANCE_WORKLOADS;
use rheap_bench::schema::Schema;
use rheap_bench::system::{self, Configuration, Size};
use rheap_bench::workload::{self, Workload};
use rheap_harness::paths;
use std::path::{Path, PathBuf};
use std::process::Command;

/// rheap's part: its object, and its functions callgrind places in none.
const RHEAP: &str = "ha_rheap.so";

/// The parts reported by name; the rest of the process is summed as "other".
const PARTS: [&str; 3] = ["mariadbd", "libc.so.6", RHEAP];

/// Code run per statement: each workload on each system with one connection, mariadbd under
/// callgrind with its cache simulation; per statement, for mariadbd, libc, rheap and the rest:
/// instructions, code lines run and simulated cache misses. Needs valgrind; the profiles stay in
/// target/footprint/<workload>.<system>/ for callgrind_annotate.
#[derive(Debug, Parser)]
#[command(name = "footprint")]
struct Args {
    // (No doc comments where the help is made from the lists: clap would take theirs.)
    #[arg(
        long = "workload",
        value_name = "NAME",
        value_parser = workload::arg_parser(),
        default_values = ACCEPTANCE_WORKLOADS,
        help = "A workload to run, repeatable; by default the five the acceptance names"
    )]
    workloads: Vec<Workload>,

    #[arg(
        long = "system",
        value_name = "NAME",
        value_parser = system::arg_parser(),
        default_values = ["stock", "rheap"],
        help = "A system to run, repeatable"
    )]
    systems: Vec<String>,

    #[arg(
        long,
        value_parser = clap::builder::PossibleValuesParser::new(system::SIZES.map(|s| s.0))
            .map(|v| *system::SIZES.iter().find(|s| s.0 == v).expect("a possible value")),
        default_value = system::SIZES[0].0,
        help = "tmp_table_size = max_heap_table_size"
    )]
    size: Size,

    /// Iterations measured, after one unmeasured.
    #[arg(long, value_name = "N", default_value_t = 2,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    iterations: usize,
}

fn main() {
    if let Err(e) = footprint() {
        eprintln!("footprint: {e:#}");
        std::process::exit(1);
    }
}

/// One workload on one system: its profile and how many statements it covers.
struct Measured {
    system: String,
    statements: u64,
    profile: Profile,
}

fn footprint() -> Result<()> {
    let args = Args::parse();
    let valgrind = Command::new("valgrind").arg("--version").output();
    ensure!(
        valgrind.is_ok_and(|o| o.status.success()),
        "valgrind is not installed (apt-get install valgrind)"
    );
    let schema = Schema::standard();
    let root = paths::target().join("footprint");
    println!(
        "Per statement, one connection under callgrind, tmp_table_size = max_heap_table_size = \
         {}, {} iteration(s) measured after one unmeasured.\n",
        args.size.0, args.iterations
    );
    println!("| workload | system | part | instructions | code lines | I1 misses | D1 misses | LL misses |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for w in &args.workloads {
        let mut measured = Vec::new();
        for name in &args.systems {
            eprintln!(
                "footprint: {} on {name} {}: under callgrind",
                w.name, args.size.0
            );
            let dir = root.join(format!("{}.{name}", w.name));
            measured.push(measure(w, name, args.size, args.iterations, &schema, &dir)?);
        }
        for m in &measured {
            for row in rows(&m.profile, m.statements) {
                println!("| {} | {} | {row} |", w.name, m.system);
            }
        }
    }
    println!("\nProfiles: {}", root.display());
    Ok(())
}

/// Runs `w` on `system` under callgrind, instrumenting only the measured iterations.
fn measure(
    w: &Workload,
    system: &str,
    size: Size,
    iterations: usize,
    schema: &Schema,
    dir: &Path,
) -> Result<Measured> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    let wrapper = callgrind::wrapper(
        dir,
        "--cache-sim=yes --dump-instr=yes --I1=32768,8,64 --D1=49152,12,64 \
         --LL=2097152,16,64 --instr-atstart=no --separate-threads=yes",
    )?;
    let sut = system::named(system)?;
    let mut config = Configuration::start_with(sut, size, schema, |o| {
        o.mariadbd = wrapper;
        o.args
            .extend(callgrind::SERVER_OPTIONS.iter().map(|s| s.to_string()));
    })?;
    let pid = config.server.pid().context("the server's pid")?;
    let statements = w.iteration(schema);
    let mut c = config.conn()?;
    let run = |c: &mut mysql::Conn| -> Result<()> {
        for s in &statements {
            c.query_drop(s).with_context(|| format!("running {s}"))?;
        }
        Ok(())
    };
    run(&mut c)?;
    callgrind::control(pid, "-i on")?;
    for _ in 0..iterations {
        run(&mut c)?;
    }
    callgrind::control(pid, "-i off")?;
    callgrind::control(pid, "-d")?;
    drop(c);
    config.server.stop()?;
    let profile = read_busiest(dir, |func| {
        func.contains("rheap").then(|| RHEAP.to_string())
    })?;
    Ok(Measured {
        system: system.to_string(),
        statements: (iterations * statements.len()) as u64,
        profile,
    })
}

/// The profile in `dir` with the most instructions: the connection's thread in the dump.
fn read_busiest(dir: &Path, name_part: impl Fn(&str) -> Option<String>) -> Result<Profile> {
    let mut best: Option<(u64, PathBuf, String)> = None;
    for (path, text) in callgrind::profiles(dir)? {
        // A thread's own count is its `totals:` (a dump's `summary:` may be of others).
        let total = text
            .lines()
            .find_map(|l| l.strip_prefix("totals:"))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0);
        if best.as_ref().is_none_or(|(b, _, _)| total > *b) {
            best = Some((total, path, text));
        }
    }
    let (total, path, text) = best.context("callgrind wrote no profile")?;
    ensure!(total > 0, "callgrind counted nothing in {}", dir.display());
    Profile::parse(&text, name_part).with_context(|| format!("reading {}", path.display()))
}

/// A part's figures, or several parts' summed.
#[derive(Default)]
struct Sum {
    ir: u64,
    lines: usize,
    i1: u64,
    d1: u64,
    ll: u64,
}

impl Sum {
    fn add(mut self, part: &Part, statements: u64) -> Sum {
        self.ir += part.ir;
        self.lines += part.lines_run(statements);
        self.i1 += part.i1_misses;
        self.d1 += part.d1_misses;
        self.ll += part.ll_misses;
        self
    }

    /// Cells per statement, after the part's name.
    fn cells(&self, name: &str, statements: u64) -> String {
        let per = |v: u64| v as f64 / statements as f64;
        format!(
            "{name} | {:.0} | {} | {:.1} | {:.1} | {:.1}",
            per(self.ir),
            self.lines,
            per(self.i1),
            per(self.d1),
            per(self.ll)
        )
    }
}

/// The table's cells after workload and system: a row per named part, one for the rest of the
/// process, and the total.
fn rows(p: &Profile, statements: u64) -> Vec<String> {
    let sum = |keep: &dyn Fn(&str) -> bool| {
        p.parts
            .iter()
            .filter(|(name, _)| keep(name))
            .fold(Sum::default(), |s, (_, part)| s.add(part, statements))
    };
    let mut out: Vec<String> = PARTS
        .iter()
        .map(|&name| sum(&|n| n == name).cells(name, statements))
        .collect();
    out.push(sum(&|n| !PARTS.contains(&n)).cells("other", statements));
    out.push(sum(&|_| true).cells("**total**", statements));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Args::command().debug_assert();
    }

    #[test]
    fn defaults() {
        let a = Args::try_parse_from(["footprint"]).unwrap();
        let names: Vec<&str> = a.workloads.iter().map(|w| w.name).collect();
        assert_eq!(names, ACCEPTANCE_WORKLOADS);
        assert_eq!(a.systems, ["stock", "rheap"]);
        assert_eq!((a.size, a.iterations), (Size("16M"), 2));
        let help = Args::command().render_long_help().to_string();
        for w in workload::ALL {
            assert!(
                help.contains(w.name) && help.contains(w.about),
                "{}",
                w.name
            );
        }
        for s in system::all() {
            assert!(help.contains(s.name()) && help.contains(s.about()));
        }
        assert!(help.contains("[default: 2]") && help.contains("[default: 16M]"));
    }

    #[test]
    fn bad_values_are_rejected() {
        use clap::error::ErrorKind;
        for (bad, kind) in [
            (&["--size", "1G"][..], ErrorKind::InvalidValue),
            (&["--workload", "nope"], ErrorKind::InvalidValue),
            (&["--system", "nope"], ErrorKind::InvalidValue),
            (&["--iterations", "0"], ErrorKind::ValueValidation),
        ] {
            let argv = std::iter::once("footprint").chain(bad.iter().copied());
            let e = Args::try_parse_from(argv).unwrap_err();
            assert_eq!(e.kind(), kind, "{bad:?}");
        }
        let a =
            Args::try_parse_from(["footprint", "--size", "16G", "--system", "rheap-b"]).unwrap();
        assert_eq!(
            (a.size, a.systems),
            (Size("16G"), vec!["rheap-b".to_string()])
        );
    }
}
