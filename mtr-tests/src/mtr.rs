//! Runs the installed mysql-test-run and counts its outcomes.

use anyhow::{Context, Result};
use rheap_harness::paths;
use rheap_harness::process;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Outcomes of one mtr run.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Summary {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
    /// Names of failed tests (`suite.test`, with a combination if any).
    pub failures: Vec<String>,
    /// Whether mtr itself exited 0.
    pub mtr_ok: bool,
    /// Every test's outcome (`suite.test` with its combinations, and `pass`, `fail`, `skipped`
    /// or `disabled`): from mtr's report when it wrote one, else from its output lines.
    pub outcomes: Vec<(String, &'static str)>,
}

impl Summary {
    /// The counts of `outcomes`, for a run that exited as `mtr_ok`.
    pub fn of(outcomes: Vec<(String, &'static str)>, mtr_ok: bool) -> Summary {
        let mut s = Summary {
            mtr_ok,
            ..Summary::default()
        };
        for (name, outcome) in &outcomes {
            match *outcome {
                "pass" => s.passed += 1,
                "fail" => {
                    s.failed += 1;
                    s.failures.push(name.clone());
                }
                _ => s.skipped += 1,
            }
        }
        s.outcomes = outcomes;
        s
    }
}

/// One mtr invocation.
#[derive(Debug, Clone)]
pub struct Run {
    /// `--suite=` values: names of installed suites, or absolute paths of ours.
    pub suites: Vec<String>,
    /// Test names to run (empty: the whole suites).
    pub tests: Vec<String>,
    /// `--mysqld=` options for every server.
    pub mysqld: Vec<String>,
    /// Further mtr options (e.g. `--valgrind`).
    pub options: Vec<String>,
    /// mtr's scratch directory.
    pub vardir: PathBuf,
    pub parallel: usize,
    /// Environment for mtr (e.g. `RHEAP_PLUGIN_DIR` for our suite.opt).
    pub env: Vec<(String, String)>,
    /// Where mtr's whole output is kept.
    pub log: PathBuf,
    /// mtr's own report of every test's outcome (`--xml-report`), written when it finishes.
    pub report: PathBuf,
}

impl Run {
    pub fn new(name: &str) -> Run {
        let base = paths::target().join("mtr").join(name);
        Run {
            suites: Vec::new(),
            tests: Vec::new(),
            mysqld: Vec::new(),
            options: Vec::new(),
            vardir: base.join("var"),
            parallel: 2,
            env: Vec::new(),
            log: base.join("mtr.log"),
            report: base.join("mtr.xml"),
        }
    }

    /// Runs mtr, echoing each test's outcome line as it comes (progress), and counts the
    /// outcomes.
    pub fn run(&self) -> Result<Summary> {
        self.check_result_files(&paths::suites())?;
        std::fs::create_dir_all(self.log.parent().unwrap())?;
        let mut args: Vec<String> = vec![
            "./mtr".into(),
            format!("--vardir={}", self.vardir.display()),
            format!("--parallel={}", self.parallel),
            "--force".into(),
            "--max-test-fail=0".into(),
            "--retry=0".into(),
            format!("--xml-report={}", self.report.display()),
        ];
        if !self.suites.is_empty() {
            args.push(format!("--suite={}", self.suites.join(",")));
        }
        args.extend(self.mysqld.iter().map(|o| format!("--mysqld={o}")));
        args.extend(self.options.iter().cloned());
        args.extend(self.tests.iter().cloned());
        let mut cmd = duct::cmd("perl", &args).dir(paths::mtr_dir());
        for (k, v) in &self.env {
            cmd = cmd.env(k, v);
        }
        // A report left by an earlier run would stand for this one's.
        match std::fs::remove_file(&self.report) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing {}", self.report.display()));
            }
            _ => {}
        }
        let mut log = std::fs::File::create(&self.log)?;
        let mut streamed = Vec::new();
        let mtr_ok = process::stream(cmd, |line| {
            log.write_all(line.as_bytes())?;
            if let Some((name, outcome)) = outcome(line) {
                println!("  {name:<60} {outcome}");
                streamed.push((name.to_string(), outcome));
            }
            Ok(())
        })
        .context("running mysql-test-run (package mariadb-test)")?;
        // The lines above are progress. mtr writes an outcome line in several pieces (a print
        // each) to a pipe its workers write to as well, and once a `[ disabled ]` line came
        // out without its outcome: the outcomes come from mtr's report when it wrote one.
        Ok(Summary::of(self.reported()?.unwrap_or(streamed), mtr_ok))
    }

    /// Every test's outcome as mtr's report gives them; `None` when mtr wrote no report (it
    /// stopped before the end).
    fn reported(&self) -> Result<Option<Vec<(String, &'static str)>>> {
        // Lossy: a failed test's log, quoted in the report, may hold any bytes.
        match std::fs::read(&self.report) {
            Ok(xml) => Ok(Some(report_outcomes(&String::from_utf8_lossy(&xml)))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("reading {}", self.report.display())),
        }
    }

    /// Refuses a suite of ours (a suite named by a path that leads into `ours`) in which a
    /// test has no result file: mysql-test-run would pass that test without checking its
    /// output. Unless this run records results (`--record`), which is how a new test gets one.
    fn check_result_files(&self, ours: &Path) -> Result<()> {
        if self
            .tests
            .iter()
            .chain(&self.options)
            .any(|a| a == "--record")
        {
            return Ok(());
        }
        let ours = std::fs::canonicalize(ours)?;
        for suite in self.suites.iter().map(Path::new) {
            // Upstream suites go by name, ours by a link (our_suite): only a path resolves.
            let real = match std::fs::canonicalize(suite) {
                Ok(real) if real.starts_with(&ours) => real,
                _ => continue,
            };
            let missing = tests_without_results(&real)?;
            anyhow::ensure!(
                missing.is_empty(),
                "{}: no r/<test>.result for {} (mysql-test-run passes such a test without \
                 checking its output; record one with --record)",
                real.display(),
                missing.join(", ")
            );
        }
        Ok(())
    }
}

/// What valgrind reported in the server error logs under a vardir.
#[derive(Debug, Default, Clone)]
pub struct Valgrind {
    /// Error reports (invalid accesses, uninitialised values, bad frees, leaks), each as its
    /// first line, and whether its stack passes through rheap.
    pub errors: Vec<(String, bool)>,
    /// Every `ERROR SUMMARY:` line.
    pub summaries: Vec<String>,
    /// The first rheap report in full, to show.
    pub first_rheap: Option<String>,
    /// Servers mtr started under valgrind (its `$ valgrind ...` lines in the logs).
    pub servers: usize,
}

impl Valgrind {
    pub fn rheap_errors(&self) -> usize {
        self.errors.iter().filter(|e| e.1).count()
    }
}

/// Scans the server error logs (`*.err`) under `dir` for valgrind's reports.
pub fn valgrind_reports(dir: &Path) -> Result<Valgrind> {
    let mut out = Valgrind::default();
    let mut stack = vec![dir.to_path_buf()];
    // mtr's worker directories may be links: each directory and log once.
    let mut seen = std::collections::HashSet::new();
    while let Some(d) = stack.pop() {
        if !seen.insert(std::fs::canonicalize(&d)?) {
            continue;
        }
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if !seen.insert(std::fs::canonicalize(&path).unwrap_or(path.clone())) {
                continue;
            } else if path.extension().is_some_and(|e| e == "err") {
                let text = String::from_utf8_lossy(&std::fs::read(&path)?).into_owned();
                scan_valgrind(&text, &mut out);
            }
        }
    }
    Ok(out)
}

/// Adds the valgrind reports of one log: `==PID== ` lines, blocks separated by empty ones.
fn scan_valgrind(text: &str, out: &mut Valgrind) {
    const ERRORS: [&str; 8] = [
        "Invalid ",
        "Conditional jump",
        "Use of uninitialised",
        "Syscall param",
        "Mismatched free",
        "Source and destination overlap",
        "Argument '",
        "Jump to the invalid",
    ];
    let mut block: Vec<&str> = Vec::new();
    let flush = |block: &mut Vec<&str>, out: &mut Valgrind| {
        if let Some(first) = block.first() {
            let leak = first.contains("are definitely lost") || first.contains("are possibly lost");
            if leak || ERRORS.iter().any(|e| first.starts_with(e)) {
                let rheap = block.iter().any(|l| {
                    l.contains("ha_rheap")
                        || l.contains("librheap")
                        || l.contains("rheap::")
                        || l.contains("rheap_core::")
                });
                if rheap && out.first_rheap.is_none() {
                    out.first_rheap = Some(block.join("\n"));
                }
                out.errors.push((first.to_string(), rheap));
            }
        }
        block.clear();
    };
    for line in text.lines() {
        if line.starts_with("$ valgrind ") {
            out.servers += 1;
        }
        let Some(rest) = line.strip_prefix("==") else {
            continue;
        };
        let Some((pid, body)) = rest.split_once("== ") else {
            continue;
        };
        if !pid.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        if body.trim().is_empty() {
            flush(&mut block, out);
        } else {
            if body.starts_with("ERROR SUMMARY:") {
                out.summaries.push(body.trim().to_string());
            }
            block.push(body);
        }
    }
    flush(&mut block, out);
}

/// The outcomes in mtr's `--xml-report`: one `<testcase>` per test, its suite in `classname`,
/// its name without the suite in `name`, its combinations in `combinations`, its result in
/// `status`, and a `<disabled>` or `<skipped>` element inside a skipped one. Named as mtr's
/// output lines name them ([`outcome`]); a test with no result (never run) is left out.
pub fn report_outcomes(xml: &str) -> Vec<(String, &'static str)> {
    let attr = |tag: &str, key: &str| -> String {
        let pat = format!(" {key}=\"");
        tag.find(&pat)
            .and_then(|i| {
                let v = &tag[i + pat.len()..];
                v.find('"').map(|j| unescape(&v[..j]))
            })
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    for case in xml.split("<testcase ").skip(1) {
        let Some(end) = case.find('>') else { continue };
        let tag = &case[..end];
        let outcome = match attr(tag, "status").as_str() {
            "MTR_RES_PASSED" => "pass",
            "MTR_RES_FAILED" => "fail",
            "MTR_RES_SKIPPED" if case[end + 1..].trim_start().starts_with("<disabled") => {
                "disabled"
            }
            "MTR_RES_SKIPPED" => "skipped",
            _ => continue,
        };
        let (suite, test) = (attr(tag, "classname"), attr(tag, "name"));
        let mut name = if test.starts_with(&format!("{suite}.")) {
            test
        } else {
            format!("{suite}.{test}")
        };
        let combinations = attr(tag, "combinations");
        if !combinations.is_empty() {
            name = format!("{name} '{combinations}'");
        }
        out.push((name, outcome));
    }
    out
}

/// An XML attribute's value with the entities mtr writes replaced.
fn unescape(v: &str) -> String {
    [
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&#34;", "\""),
        ("&quot;", "\""),
        ("&#39;", "'"),
        ("&apos;", "'"),
        ("&#38;", "&"),
        ("&amp;", "&"),
    ]
    .iter()
    .fold(v.to_string(), |v, (from, to)| v.replace(from, to))
}

/// `main.foo 'innodb'   w1 [ pass ]   12` -> (`main.foo 'innodb'`, `pass`).
pub fn outcome(line: &str) -> Option<(&str, &'static str)> {
    let open = line.find("[ ")?;
    let close = open + line[open..].find(" ]")?;
    let outcome = match &line[open + 2..close] {
        "pass" => "pass",
        "fail" => "fail",
        "skipped" => "skipped",
        "disabled" => "disabled",
        _ => return None,
    };
    let head = line[..open].trim_end();
    // Drop the worker tag mtr adds with --parallel.
    let name = match head.rsplit_once(' ') {
        Some((n, w)) if w.starts_with('w') && w[1..].chars().all(|c| c.is_ascii_digit()) => {
            n.trim_end()
        }
        _ => head,
    };
    Some((name, outcome))
}

/// Every test of an installed suite, as `suite.test` names.
pub fn suite_tests(suite: &str) -> Result<Vec<String>> {
    let dir = paths::mtr_dir().join("suite").join(suite);
    let dir = if dir.join("t").is_dir() {
        dir.join("t")
    } else {
        dir
    };
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_suffix(".test")
                .map(|t| format!("{suite}.{t}"))
        })
        .collect();
    names.sort();
    Ok(names)
}

/// The environment our suite's `suite.opt` reads.
pub fn rheap_env(plugin_dir: &Path) -> Vec<(String, String)> {
    vec![("RHEAP_PLUGIN_DIR".into(), plugin_dir.display().to_string())]
}

/// The `--suite=` value for one of our suites.
///
/// mtr takes a suite by path only when the path has no `-` (it splits names on `-`), and
/// our checkout may have one (`mtr-tests`). So it gets a dash-free link in the temp dir,
/// one directory per checkout.
pub fn our_suite(name: &str) -> Result<String> {
    let real = paths::suites().join(name);
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::hash::Hash::hash(&paths::workspace(), &mut h);
    let dir =
        std::env::temp_dir().join(format!("rheap_suites_{:x}", std::hash::Hasher::finish(&h)));
    std::fs::create_dir_all(&dir)?;
    let link = dir.join(name);
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&real, &link)
        .with_context(|| format!("linking {}", link.display()))?;
    let s = link.display().to_string();
    anyhow::ensure!(
        !s.contains('-'),
        "mtr cannot take a suite path with '-': {s} (set TMPDIR to a path without one)"
    );
    Ok(s)
}

/// How many tests (`t/*.test`) the suite directory `suite` holds.
pub fn test_files(suite: &Path) -> Result<usize> {
    let t = suite.join("t");
    let mut n = 0;
    for entry in std::fs::read_dir(&t).with_context(|| format!("reading {}", t.display()))? {
        n += usize::from(entry?.path().extension().is_some_and(|e| e == "test"));
    }
    Ok(n)
}

/// The tests in `suite`'s `t/` that have no result file in its `r/`, sorted.
fn tests_without_results(suite: &Path) -> Result<Vec<String>> {
    let t = suite.join("t");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&t).with_context(|| format!("reading {}", t.display()))? {
        let file = entry?.file_name();
        let Some(test) = file.to_str().and_then(|f| f.strip_suffix(".test")) else {
            continue;
        };
        if !suite.join("r").join(format!("{test}.result")).is_file() {
            missing.push(test.to_string());
        }
    }
    missing.sort();
    Ok(missing)
}

#[cfg(test)]
mod tests {
    use super::outcome;

    #[test]
    fn every_test_of_our_suites_has_a_result_file() {
        let suites = rheap_harness::paths::suites();
        for entry in std::fs::read_dir(&suites).unwrap() {
            let suite = entry.unwrap().path();
            if !suite.is_dir() {
                continue;
            }
            assert_eq!(
                super::tests_without_results(&suite).unwrap(),
                Vec::<String>::new(),
                "{}",
                suite.display()
            );
        }
    }

    #[test]
    fn a_test_without_a_result_file_is_found() {
        let dir = std::env::temp_dir().join(format!("rheap_results_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for d in ["t", "r"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        for f in ["t/a.test", "r/a.result", "t/b.test", "t/b.opt", "t/c.test"] {
            std::fs::write(dir.join(f), "").unwrap();
        }
        let missing = super::tests_without_results(&dir).unwrap();
        let mut run = super::Run::new("results_check");
        run.suites = vec!["main".into(), dir.display().to_string()];
        let refused = run.check_result_files(&dir).unwrap_err().to_string();
        // A suite outside ours (the storage_engine suite's overlay, say) is not checked.
        let elsewhere = run.check_result_files(&rheap_harness::paths::suites());
        run.tests.push("--record".into());
        let recording = run.check_result_files(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(missing, ["b", "c"]);
        assert!(refused.contains("no r/<test>.result for b, c"), "{refused}");
        assert!(elsewhere.is_ok());
        assert!(recording.is_ok());
    }

    #[test]
    fn valgrind_reports_are_found_and_attributed() {
        let log = "$ valgrind --tool=memcheck /usr/sbin/mariadbd\n\
                   ==12== Memcheck, a memory error detector\n\
                   ==12== \n\
                   ==12== Invalid read of size 8\n\
                   ==12==    at 0x1: rheap::table::Table::write (table.rs:10)\n\
                   ==12==    by 0x2: rheap_write_row (ha_rheap.so)\n\
                   ==12== \n\
                   ==12== Conditional jump or move depends on uninitialised value(s)\n\
                   ==12==    at 0x3: my_hash_sort (mariadbd)\n\
                   ==12== \n\
                   ==12== 8 bytes in 1 blocks are definitely lost in loss record 1 of 9\n\
                   ==12==    by 0x4: rheap_block_alloc (ha_rheap.so)\n\
                   ==12== \n\
                   ==12== LEAK SUMMARY:\n\
                   ==12== ERROR SUMMARY: 3 errors from 3 contexts (suppressed: 0 from 0)\n\
                   2024-01-01 [Note] not valgrind\n";
        let mut v = super::Valgrind::default();
        super::scan_valgrind(log, &mut v);
        assert_eq!(v.errors.len(), 3);
        assert_eq!(v.rheap_errors(), 2);
        assert_eq!(v.summaries.len(), 1);
        assert_eq!(v.servers, 1);
        assert!(v.first_rheap.unwrap().starts_with("Invalid read"));
    }

    #[test]
    fn report_outcomes_parse() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites disabled="1" errors="" failures="1" name="" tests="6" time="1.0">
	<testsuite disabled="1" errors="" failures="1" hostname="h" id="0" name="/tmp/se/storage_engine" package="" skipped="1" tests="4" time="1.0" timestamp="t">
		<testcase assertions="" classname="/tmp/se/storage_engine" name="alter_table" status="MTR_RES_FAILED" time="0.5" combinations="">
			<failure message="" type="MTR_RES_FAILED">
<![CDATA[mysqltest: <testcase in the log> [ pass ]]]>
			</failure>
		</testcase>
		<testcase assertions="" classname="/tmp/se/storage_engine" name="insert" status="MTR_RES_PASSED" time="0.1" combinations="" />
		<testcase assertions="" classname="/tmp/se/storage_engine" name="type_int" status="MTR_RES_SKIPPED" time="0.000" combinations="">
			<disabled message="MDEV-1 &#39;a&#39; &lt;b&gt;" type="MTR_RES_SKIPPED"/>
		</testcase>
		<testcase assertions="" classname="/tmp/se/storage_engine" name="misc" status="MTR_RES_SKIPPED" time="0.000" combinations="">
			<skipped message="Needs something" type="MTR_RES_SKIPPED"/>
		</testcase>
	</testsuite>
	<testsuite disabled="0" errors="" failures="0" hostname="h" id="1" name="heap" package="" skipped="0" tests="2" time="0.1" timestamp="t">
		<testcase assertions="" classname="heap" name="heap" status="MTR_RES_PASSED" time="0.1" combinations="innodb,x" />
		<testcase assertions="" classname="heap" name="never_ran" status="" time="0.000" combinations="" />
	</testsuite>
</testsuites>
"#;
        let got = super::report_outcomes(xml);
        let want: Vec<(String, &str)> = [
            ("/tmp/se/storage_engine.alter_table", "fail"),
            ("/tmp/se/storage_engine.insert", "pass"),
            ("/tmp/se/storage_engine.type_int", "disabled"),
            ("/tmp/se/storage_engine.misc", "skipped"),
            ("heap.heap 'innodb,x'", "pass"),
        ]
        .into_iter()
        .map(|(n, o)| (n.to_string(), o))
        .collect();
        assert_eq!(got, want);
        let s = super::Summary::of(got.clone(), true);
        assert_eq!((s.passed, s.failed, s.skipped), (2, 1, 2));
        assert_eq!(s.failures, ["/tmp/se/storage_engine.alter_table"]);
        assert_eq!(s.outcomes, got);
    }

    #[test]
    fn outcome_lines_parse() {
        assert_eq!(
            outcome("main.show_check                          w2 [ pass ]    352\n"),
            Some(("main.show_check", "pass"))
        );
        assert_eq!(
            outcome("heap.heap 'innodb'                       w1 [ fail ]\n"),
            Some(("heap.heap 'innodb'", "fail"))
        );
        assert_eq!(
            outcome("rheap.basic                              [ skipped ]  Needs RHEAP\n"),
            Some(("rheap.basic", "skipped"))
        );
        assert_eq!(outcome("[ 50%] something\n"), None);
        assert_eq!(outcome("Completed: All 5 tests were successful.\n"), None);
    }
}
