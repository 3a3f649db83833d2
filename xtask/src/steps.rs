//! Each suite, fuzzer and check that `cargo xtask` runs, as a step of [`crate::tally`]:
//! what it runs, on which plugin and settings, and how its outcome is counted. The tests
//! themselves are in `rheap-mtr-tests`; the plugin they load is the one `cargo xtask dist`
//! staged (`rheap_harness::plugin`), or the directory `RHEAP_PLUGIN_DIR` names.

use crate::cleanroom;
use crate::docker_check;
use crate::tally::Tally;
use anyhow::{bail, Result};
use mysql::prelude::Queryable;
use rheap_harness::server::{Options, Server};
use rheap_harness::{paths, plugin, sql};
use rheap_mtr_tests::{conformance, fuzz, mtr, storage_engine, stress};
use std::time::Duration;

/// The upstream `main` tests heavy in temporary tables that must pass unchanged with every
/// MEMORY table served by rheap (`--rheap-takeover=ALL`), beside the whole `heap` suite.
pub const UPSTREAM_CONFORMANCE: &[&str] = &[
    "main.group_by",
    "main.group_by_null",
    "main.group_min_max",
    "main.distinct",
    "main.derived",
    "main.derived_view",
    "main.union",
    "main.having",
    "main.subselect",
    "main.subselect_mat",
    "main.subselect_sj",
    "main.order_by",
    "main.ps_4heap",
    "main.ctype_utf8mb4_heap",
    "main.strict_autoinc_3heap",
    "main.tmp_table_error",
    "main.tmp_table_count-7586",
    "main.memory_used",
    "main.information_schema",
    "main.show_check",
    "main.count_distinct",
    "main.func_group",
    "main.win",
    "main.cte_recursive",
    "main.intersect",
    "main.except",
];

pub fn serve(smoke: bool) -> Result<()> {
    let server = Server::start(Options::with_plugin_loaded()?)?;
    let mut c = server.conn()?;
    if !sql::rheap_available(&mut c)? {
        bail!(
            "the server started but RHEAP is not available; error log:\n{}",
            server.error_log()
        );
    }
    println!("A private MariaDB server is running with RHEAP loaded.");
    println!(
        "Connect with:\n  mariadb --socket={} -u root test",
        server.socket().display()
    );
    println!("e.g. CREATE TABLE t (a INT) ENGINE=RHEAP;");
    if smoke {
        c.query_drop("CREATE TABLE smoke (a INT) ENGINE=RHEAP")?;
        c.query_drop("INSERT INTO smoke VALUES (1)")?;
        c.query_drop("DROP TABLE smoke")?;
        println!("(--smoke: it answers; stopping)");
        return Ok(());
    }
    println!(
        "Press Ctrl-C to stop it (its data is in {}).",
        server.data_dir().display()
    );
    loop {
        std::thread::park();
    }
}

/// Our suite with its tables on `engine` (RHEAP, or MEMORY: the result files are the same).
pub fn our_mtr(engine: &str, extra: &[String]) -> Result<mtr::Summary> {
    let dir = plugin::dir()?;
    let mut run = mtr::Run::new(&format!("rheap-{}", engine.to_lowercase()));
    run.suites.push(mtr::our_suite("rheap")?);
    run.env = mtr::rheap_env(&dir);
    run.env.push(("RHEAP_ENGINE".into(), engine.into()));
    run.tests = extra.to_vec();
    run.run()
}

/// Our rheap_takeover suite: its suite.opt loads the plugin; the tests set the mode.
pub fn our_takeover_mtr(extra: &[String]) -> Result<mtr::Summary> {
    let dir = plugin::dir()?;
    let mut run = mtr::Run::new("rheap-takeover");
    run.suites.push(mtr::our_suite("rheap_takeover")?);
    run.env = mtr::rheap_env(&dir);
    run.tests = extra.to_vec();
    run.run()
}

/// The upstream heap suite and temp-table-heavy main tests with the plugin loaded at its
/// package's defaults (`rheap_table_size_limit` as `limit` says) and every MEMORY table
/// (internal or not) served by rheap: they must pass unchanged, but those that
/// mtr-tests/conformance.exceptions lists for that setting, which are left out, each named
/// with its reason.
pub fn upstream_conformance(limit: conformance::Limit) -> Result<mtr::Summary> {
    let dir = plugin::dir()?;
    let accepted = conformance::Accepted::load(&conformance::list_file())?.for_pass(limit);
    let mut run = mtr::Run::new("upstream-takeover");
    let loaded = mtr::our_suite("rheap_loaded")?;
    run.suites = vec!["heap".into(), "main".into(), loaded.clone()];
    run.tests = mtr::suite_tests("heap")?;
    run.tests
        .extend(UPSTREAM_CONFORMANCE.iter().map(|t| t.to_string()));
    run.tests.retain(|t| match accepted.reason(t) {
        Some(reason) => {
            println!("upstream: {t} left out, a listed difference: {reason}");
            false
        }
        None => true,
    });
    // Fails unless the plugin really is loaded, and serving, in this configuration.
    run.tests.push(format!("{loaded}.loaded"));
    run.mysqld = vec![
        format!("--plugin-dir={}", dir.display()),
        "--plugin-load-add=ha_rheap.so".into(),
        // `loose-`, as in conformance.rs: a server a test restarts with a setting that
        // refuses the plugin starts without it, as a user's would.
        "--loose-rheap-takeover=ALL".into(),
        format!("--loose-rheap-table-size-limit={}", limit.name()),
    ];
    run.run()
}

/// The storage_engine suite as a step: its passes, its problems as failures (a listed
/// failure whose reason holds is expected, so it counts as skipped, never as a pass).
/// MEMORY's run only serves the comparison and is not counted.
pub fn storage_engine_tally(extra: &[String]) -> Tally {
    let name = "mtr storage_engine suite";
    match storage_engine::run(extra) {
        Ok(v) => {
            let notes = v.problems();
            Tally {
                name: name.into(),
                passed: v.passed.len() + v.stale.len(),
                failed: notes.len(),
                skipped: v.skipped.len()
                    + v.listed_skipped.len()
                    + v.as_memory.len()
                    + v.rheap_specific.len(),
                notes,
            }
        }
        Err(e) => Tally::failure(name, &e),
    }
}

/// The docker/ checks as a step (hadolint, the compose schema and services, the scripts the
/// container calls): one pass or failure per check. The image itself is not built.
pub fn docker_tally() -> Tally {
    let checks = docker_check::run(&paths::workspace());
    let notes: Vec<String> = (checks.iter())
        .filter_map(|c| Some(format!("{}: {}", c.name, c.problem.as_ref()?)))
        .collect();
    Tally {
        name: "docker/ checks (image not built)".into(),
        passed: checks.len() - notes.len(),
        failed: notes.len(),
        skipped: 0,
        notes,
    }
}

/// Our rheap suite under `mtr --valgrind`, then every valgrind report in the server logs:
/// one failure per report whose stack passes through rheap (others are the server's own and
/// only listed).
pub fn valgrind_tally(extra: &[String]) -> Tally {
    let name = "rheap suite under valgrind";
    let run = || -> Result<(mtr::Summary, mtr::Valgrind)> {
        let dir = plugin::dir()?;
        let mut run = mtr::Run::new("valgrind");
        let _ = std::fs::remove_dir_all(&run.vardir);
        run.suites.push(mtr::our_suite("rheap")?);
        run.env = mtr::rheap_env(&dir);
        run.env.push(("RHEAP_ENGINE".into(), "RHEAP".into()));
        // mtr's own memcheck options and suppressions, and ours (reachable-at-exit memory of
        // the loader and OpenSSL, which mtr flags when a test restarts the server).
        let supp = paths::workspace().join("mtr-tests/valgrind.supp");
        run.options = vec![format!("--valgrind=--suppressions={}", supp.display())];
        run.tests = extra.to_vec();
        let summary = run.run()?;
        let reports = mtr::valgrind_reports(&run.vardir)?;
        Ok((summary, reports))
    };
    match run() {
        Ok((s, v)) => {
            println!(
                "valgrind: {} servers under memcheck, {} error reports, {} through rheap",
                v.servers,
                v.errors.len(),
                v.rheap_errors()
            );
            for line in &v.summaries {
                println!("  {line}");
            }
            for (first, rheap) in &v.errors {
                println!("  {} {first}", if *rheap { "RHEAP " } else { "server" });
            }
            if let Some(r) = &v.first_rheap {
                println!("first report through rheap:\n{r}");
            }
            let mut t = Tally::mtr(name, &s);
            if v.servers == 0 {
                t.failed += 1;
                t.notes.push("no server ran under valgrind".into());
            }
            if v.rheap_errors() > 0 {
                t.failed += v.rheap_errors();
                t.notes.push(format!(
                    "{} valgrind errors through rheap",
                    v.rheap_errors()
                ));
            }
            t
        }
        Err(e) => Tally::failure(name, &e),
    }
}

/// One fuzz mode as a step: its clean cases pass, each mismatch fails (with its mtr case).
pub fn fuzz_tally(mode: fuzz::Mode, seed: u64, budget: Duration) -> Tally {
    let name = format!("fuzz {} (seed {seed})", mode.name());
    match fuzz::run(mode, seed, budget, 3) {
        Ok(r) => {
            println!("{}", r.summary());
            Tally {
                name,
                passed: (r.cases as usize).saturating_sub(r.mismatches.len()),
                failed: r.mismatches.len(),
                skipped: 0,
                notes: r
                    .mismatches
                    .iter()
                    .map(|m| {
                        format!(
                            "case {}: {} (mtr case {})",
                            m.case,
                            m.statement,
                            m.script.display()
                        )
                    })
                    .collect(),
            }
        }
        Err(e) => Tally::failure(&name, &e),
    }
}

/// The stress run as a step: one pass or failure per final check.
pub fn stress_tally(cfg: stress::Config) -> Tally {
    let name = format!("stress ({} clients, {} s)", cfg.threads, cfg.secs);
    println!(
        "stress: {} clients for {} s on a private server",
        cfg.threads, cfg.secs
    );
    match stress::run(cfg) {
        Ok(r) => {
            r.print();
            let notes: Vec<String> = (r.checks.iter())
                .filter(|c| !c.1)
                .map(|c| format!("{}: {}", c.0, c.2))
                .collect();
            Tally {
                name,
                passed: r.checks.len() - notes.len(),
                failed: notes.len(),
                skipped: 0,
                notes,
            }
        }
        Err(e) => Tally::failure(&name, &e),
    }
}

/// The clean-room install test of the package in target/package, one row per step.
pub fn cleanroom_tallies() -> Vec<Tally> {
    // SAFETY: geteuid(2) has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return vec![Tally {
            notes: vec!["needs root (debootstrap, chroot, mount)".into()],
            ..Tally::check("clean room", false)
        }];
    }
    let deb = match cleanroom::built_package() {
        Ok(deb) => deb,
        Err(e) => return vec![Tally::failure("clean room", &e)],
    };
    cleanroom::run(&deb)
        .into_iter()
        .map(|s| {
            let name = format!("clean room: {}", s.name);
            match s.result {
                Ok(_) => Tally::check(&name, true),
                Err(e) => Tally::failure(&name, &e),
            }
        })
        .collect()
}
