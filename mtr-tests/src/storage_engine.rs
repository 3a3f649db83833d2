//! The server's generic engine suite, `suite/storage_engine` (package mariadb-test), run
//! against ENGINE=RHEAP, and against ENGINE=MEMORY to compare with.
//!
//! Nothing of that suite is kept in this repository. Each run copies it, with its `parts/`
//! and `trx/` sub-suites, twice into dash-free directories under the temp dir (mtr splits
//! `--suite` names on `-`), one copy per [`Engine`], then writes our own files into each:
//!
//! - `define_engine.inc`, which the suite sources to learn the engine under test;
//! - `suite.opt` in each of the three suite directories, loading `ha_rheap.so` from the
//!   staged plugin directory (an upstream `suite.opt`, should one appear, is kept first);
//!   MEMORY's run loads it too, so that both servers differ only in `$ENGINE`;
//! - [`GUARD`], a test that fails unless RHEAP is loaded: without the plugin every upstream
//!   test skips itself, and an all-skipped run must not pass (it counts among the passes).
//!
//! The suite's `my.cnf` and `disabled.def` are used as they come. The two copies run side by
//! side, each mtr with its own vardir (mtr reserves its ports with locks shared by every
//! mtr on the host). RHEAP's outcomes are then set against
//! `mtr-tests/storage_engine.exceptions` and each RHEAP failure's `.reject` against MEMORY's
//! (see [`exceptions`], [`compare`] and [`verdict`]).

pub mod compare;
pub mod exceptions;
pub mod outcome;
pub mod verdict;

use crate::mtr;
use anyhow::{ensure, Context, Result};
use compare::Comparison;
use exceptions::Exceptions;
use rheap_harness::{paths, plugin};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use verdict::{Verdict, GUARD};

/// The suite's name, under the installed mysql-test's `suite/`.
pub const SUITE: &str = "storage_engine";

/// Its sub-suites, each run as a suite of its own; our names for their tests are
/// `<sub>/<test>`.
pub const SUB_SUITES: &[&str] = &["parts", "trx"];

/// An engine the suite runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Rheap,
    Memory,
}

impl Engine {
    /// Its name for `ENGINE=`.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Rheap => "RHEAP",
            Engine::Memory => "MEMORY",
        }
    }

    /// The directory of its copy under the run's temp dir, and its mtr run's name (under
    /// target/mtr).
    fn dir_name(self) -> &'static str {
        match self {
            Engine::Rheap => "rheap",
            Engine::Memory => "memory",
        }
    }

    fn run_name(self) -> &'static str {
        match self {
            Engine::Rheap => "storage_engine",
            Engine::Memory => "storage_engine_memory",
        }
    }
}

/// Our `define_engine.inc`: the engine under test and the defaults the suite's includes read.
/// RHEAP takes plain HEAP definitions, so no column or table options are needed; an ordinary
/// `INDEX` is the default index, as for MEMORY. Both engines get the same defaults.
fn define_engine(engine: Engine) -> String {
    format!(
        "\
# Written by rheap's harness (mtr-tests/src/storage_engine.rs) into a temporary copy of the
# storage_engine suite: the engine under test, and the defaults its tests build tables with.
let $ENGINE = {};
let $default_col_opts = /*!*/;
let $default_col_indexed_opts = /*!*/;
let $default_tbl_opts = /*!*/;
let $default_index = /*!INDEX*/;
let $default_int_type = INT(11);
let $default_char_type = CHAR(8);
",
        engine.name()
    )
}

/// [`GUARD`]'s test file and its expected output.
const GUARD_TEST: &str = "\
# Written by rheap's harness: fails (rather than skips) unless RHEAP is loaded, so that a run
# whose plugin did not load cannot pass as 'everything skipped'.
if (!`SELECT COUNT(*) FROM information_schema.ENGINES WHERE ENGINE = 'RHEAP' AND SUPPORT = 'YES'`)
{
  --die RHEAP is not loaded: check suite.opt and the server's error log
}
--echo RHEAP is loaded
";
const GUARD_RESULT: &str = "RHEAP is loaded\n";

/// The exceptions file.
pub fn exceptions_file() -> PathBuf {
    paths::workspace().join("mtr-tests/storage_engine.exceptions")
}

/// The installed suite.
pub fn upstream_dir() -> PathBuf {
    paths::mtr_dir().join("suite").join(SUITE)
}

/// A copy of the suite, ready for mtr.
#[derive(Debug, Clone)]
pub struct SuiteCopy {
    /// The engine it runs against.
    pub engine: Engine,
    /// The copy's top-level suite directory (named [`SUITE`]).
    pub dir: PathBuf,
    /// Every test in it, by our names (`alter_table`, `parts/alter_table`, ...).
    pub tests: BTreeSet<String>,
}

impl SuiteCopy {
    /// Each `--suite=` value with the prefix of our names for its tests.
    pub fn suites(&self) -> Vec<(String, String)> {
        let mut s = vec![(self.dir.display().to_string(), String::new())];
        for sub in self.sub_suites() {
            s.push((self.dir.join(sub).display().to_string(), format!("{sub}/")));
        }
        s
    }

    fn sub_suites(&self) -> impl Iterator<Item = &'static str> + '_ {
        SUB_SUITES
            .iter()
            .copied()
            .filter(|s| self.dir.join(s).is_dir())
    }
}

/// The temp directory that holds both copies: one per checkout, replaced on each run.
pub fn copies_root() -> PathBuf {
    std::env::temp_dir().join(format!("rheap_se_{:x}", checkout_hash()))
}

/// Makes fresh copies of the installed suite under [`copies_root`], one per engine in
/// `engines`, each loading the plugin from `plugin_dir`.
pub fn prepare(plugin_dir: &Path, engines: &[Engine]) -> Result<Vec<SuiteCopy>> {
    let upstream = upstream_dir();
    ensure!(
        upstream.join("define_engine.inc").is_file(),
        "no storage_engine suite at {} (package mariadb-test)",
        upstream.display()
    );
    let plugin_dir = plugin_dir
        .canonicalize()
        .with_context(|| format!("the plugin directory {}", plugin_dir.display()))?;
    let plugin_dir = plugin_dir.display().to_string();
    ensure!(
        !plugin_dir.contains(char::is_whitespace),
        "mtr splits suite.opt on whitespace; the plugin directory has some: {plugin_dir}"
    );
    let root = copies_root();
    if root.exists() {
        std::fs::remove_dir_all(&root).with_context(|| format!("removing {}", root.display()))?;
    }
    engines
        .iter()
        .map(|&e| prepare_one(&upstream, &root.join(e.dir_name()), e, &plugin_dir))
        .collect()
}

/// One copy, at `parent/`[`SUITE`], against `engine`.
fn prepare_one(
    upstream: &Path,
    parent: &Path,
    engine: Engine,
    plugin_dir: &str,
) -> Result<SuiteCopy> {
    let dir = parent.join(SUITE);
    let shown = dir.display().to_string();
    ensure!(
        !shown.contains('-'),
        "mtr cannot take a suite path with '-': {shown} (set TMPDIR to a path without one)"
    );
    copy_tree(upstream, &dir)?;

    std::fs::write(dir.join("define_engine.inc"), define_engine(engine))?;
    ensure!(
        !dir.join("suite.pm").exists(),
        "the upstream suite has a suite.pm now: read ours into it"
    );
    std::fs::write(dir.join("suite.pm"), suite_pm())?;
    ensure!(
        !dir.join(format!("{GUARD}.test")).exists(),
        "the upstream suite has a test named {GUARD}: rename ours"
    );
    std::fs::write(dir.join(format!("{GUARD}.test")), GUARD_TEST)?;
    std::fs::write(dir.join(format!("{GUARD}.result")), GUARD_RESULT)?;

    let mut copy = SuiteCopy {
        engine,
        dir,
        tests: BTreeSet::new(),
    };
    // Tables fill at MEMORY's row (rheap_table_size_limit=HEAP), as MEMORY's results expect.
    let opt = format!(
        "--plugin-dir={plugin_dir} --plugin-load-add=ha_rheap.so --rheap-table-size-limit=HEAP\n"
    );
    for (suite, prefix) in copy.suites() {
        let suite = PathBuf::from(suite);
        let file = suite.join("suite.opt");
        let kept = if file.exists() {
            std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?
        } else {
            String::new()
        };
        std::fs::write(&file, format!("{kept}{opt}"))
            .with_context(|| format!("writing {}", file.display()))?;
        for test in tests_in(&suite)? {
            copy.tests.insert(format!("{prefix}{test}"));
        }
    }
    Ok(copy)
}

/// The copy's `suite.pm`: mysql-test-run's log checks ignore what the plugin's presence
/// writes to the server's log (`paths::mtr_suppressions`).
fn suite_pm() -> String {
    format!(
        "package My::Suite::Storage_engine_with_rheap;\n@ISA = qw(My::Suite);\n\
         do(\"{}\") or die \"rheap_suppressions.pl: $@ $!\";\nbless {{ }};\n",
        paths::mtr_suppressions().display()
    )
}

/// A hash of the workspace path: one copy per checkout.
fn checkout_hash() -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::hash::Hash::hash(&paths::workspace(), &mut h);
    std::hash::Hasher::finish(&h)
}

/// Copies the directory `from` to `to`, recursively (regular files and directories; the
/// suite has nothing else).
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if src.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).with_context(|| format!("copying {}", src.display()))?;
        }
    }
    Ok(())
}

/// The names of the `.test` files directly in `dir`.
fn tests_in(dir: &Path) -> Result<Vec<String>> {
    let mut tests = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let name = entry?.file_name();
        if let Some(test) = name.to_str().and_then(|n| n.strip_suffix(".test")) {
            tests.push(test.to_string());
        }
    }
    Ok(tests)
}

/// How many mtr workers per run: one per CPU, from 2 up to 8. The tests mostly wait (sleeps,
/// lock timeouts, and a server restart after every failed test), so the two runs go side by
/// side, with twice as many servers as CPUs in all. On 2 CPUs, both runs of the whole suite:
/// 60-72 s side by side with 2 workers each, 76 s with 3 or 4 each, 90 s one after the other
/// with 4 each (RHEAP's run alone: 44 s).
fn workers() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8))
}

/// What one engine's mtr run produced.
struct EngineRun {
    outcomes: BTreeMap<String, outcome::Outcome>,
    mtr_ok: bool,
    log: PathBuf,
    took: Duration,
}

/// Runs `copy` through mtr with the `extra` arguments, printing each outcome as it comes.
fn run_copy(copy: &SuiteCopy, extra: &[String], parallel: usize) -> Result<EngineRun> {
    let started = Instant::now();
    let mut run = mtr::Run::new(copy.engine.run_name());
    let suites = copy.suites();
    run.suites = suites.iter().map(|(s, _)| s.clone()).collect();
    run.tests = extra.to_vec();
    run.parallel = parallel;
    let summary = run
        .run()
        .with_context(|| format!("the run against {}", copy.engine.name()))?;
    Ok(EngineRun {
        outcomes: outcome::outcomes(
            summary.outcomes.iter().map(|(n, o)| (n.as_str(), *o)),
            &suites,
        ),
        mtr_ok: summary.mtr_ok,
        log: run.log,
        took: started.elapsed(),
    })
}

/// Runs the suite against RHEAP and MEMORY side by side, printing each test's outcome as it
/// comes (RHEAP's and MEMORY's told apart by their copy's path), then the RHEAP-specific
/// failures, the problems, and the two summary lines. `extra` goes to both mtr runs after
/// our arguments (test names, options); with any, the run may be narrowed, so tests without
/// an outcome are not judged.
///
/// mysqltest writes each failing test's `.reject` beside its `.result`, that is in the
/// copies, which stay until the next run.
pub fn run(extra: &[String]) -> Result<Verdict> {
    let started = Instant::now();
    let file = exceptions_file();
    let exceptions = Exceptions::load(&file)?;
    let copies = prepare(&plugin::dir()?, &[Engine::Rheap, Engine::Memory])?;
    let [rheap_copy, memory_copy] = &copies[..] else {
        unreachable!("one copy per engine asked for");
    };
    println!(
        "storage_engine: {} tests copied to {} and {}, {} listed in {}",
        rheap_copy.tests.len(),
        rheap_copy.dir.display(),
        memory_copy.dir.display(),
        exceptions.len(),
        file.display()
    );

    let parallel = workers();
    let (rheap, memory) = std::thread::scope(|s| {
        let memory = s.spawn(|| run_copy(memory_copy, extra, parallel));
        let rheap = run_copy(rheap_copy, extra, parallel);
        let memory = memory
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("MEMORY's run panicked")));
        (rheap, memory)
    });
    let (rheap, memory) = (rheap?, memory?);

    let comparisons = rheap
        .outcomes
        .iter()
        .filter(|(_, o)| **o == outcome::Outcome::Fail)
        .map(|(test, _)| {
            let memory_outcome = memory.outcomes.get(test).copied();
            let c = Comparison::of(test, &rheap_copy.dir, &memory_copy.dir, memory_outcome);
            (test.clone(), c)
        })
        .collect();
    let whole_run = extra.is_empty();
    let mut v = verdict::compare(
        &rheap.outcomes,
        &exceptions,
        &rheap_copy.tests,
        whole_run,
        comparisons,
    );
    v.mtr_error = !rheap.mtr_ok;
    v.add_memory(
        &memory.outcomes,
        &memory_copy.tests,
        whole_run,
        memory.mtr_ok,
    );

    for t in &v.rheap_specific {
        println!(
            "  RHEAP-specific: {t}: {}",
            exceptions.reason(t).unwrap_or_default()
        );
    }
    for p in v.problems() {
        println!("  problem: {p}");
    }
    println!(
        "storage_engine: took {:.0?} (RHEAP {:.0?} and MEMORY {:.0?} side by side, {} workers \
         each); mtr's logs: {} and {}",
        started.elapsed(),
        rheap.took,
        memory.took,
        parallel,
        rheap.log.display(),
        memory.log.display()
    );
    if v.failed() > 0 {
        println!(
            "storage_engine: each failure's .reject is in {} (MEMORY's in {})",
            rheap_copy.dir.display(),
            memory_copy.dir.display()
        );
    }
    println!("{}", v.summary_line());
    println!("{}", v.memory_line());
    Ok(v)
}
