//! The differential fuzzer: the same seeded random work on MEMORY and on rheap, every answer
//! compared.
//!
//! - [`twin`]: twin tables in one server, one ENGINE=MEMORY and one ENGINE=RHEAP of each
//!   random definition, the same random writes, reads and HANDLER sessions on both.
//! - [`servers`]: a stock server and one with rheap (`rheap_takeover=INTERNAL`) given the same
//!   data and the same random queries that build internal temporary tables, at a small and a
//!   large `tmp_memory_table_size`.
//!
//! Everything is drawn from a seed: case `i` of seed `s` is the same on every run, so a
//! mismatch is named by both. On a mismatch the fuzzer shrinks the case (delta debugging over
//! its steps) and writes it out as an mtr test case under `target/fuzz/`.
//!
//! `cargo xtask fuzz --minutes N --seed S [--mode twin|servers|both]` runs it; `cargo xtask test`
//! runs a fixed seed for a short budget.

pub mod outcome;
pub mod report;
pub mod rng;
pub mod schema;
pub mod servers;
pub mod shrink;
pub mod twin;

pub use report::{Mismatch, Mode, Report};

use anyhow::{Context, Result};
use mysql::prelude::Queryable;
use report::{case_rng, out_dir, Progress, SHRINK_BUDGET};
use rheap_harness::server::{Options, Server};
use std::time::Duration;

/// Runs `mode` for `budget` from `seed`, stopping at the first `max_mismatches` mismatches;
/// prints progress every few seconds.
pub fn run(mode: Mode, seed: u64, budget: Duration, max_mismatches: usize) -> Result<Report> {
    match mode {
        Mode::Twin => run_twin(seed, budget, max_mismatches),
        Mode::Servers => servers::run(seed, budget, max_mismatches),
    }
}

fn run_twin(seed: u64, budget: Duration, max_mismatches: usize) -> Result<Report> {
    let server = Server::start(Options::with_plugin_loaded()?)?;
    let (mut memory, mut rheap) = (server.conn()?, server.conn()?);
    for c in [&mut memory, &mut rheap] {
        c.query_drop("CREATE DATABASE IF NOT EXISTS fuzz")?;
        c.query_drop("USE fuzz")?;
    }
    let mut sides = twin::Sides {
        memory: &mut memory,
        rheap: &mut rheap,
        rheap_engine: "RHEAP",
        both_full: 0,
    };
    let mut progress = Progress::new();
    let mut report = Report::new(Mode::Twin, seed);
    while progress.elapsed() < budget && report.mismatches.len() < max_mismatches {
        let case = report.cases;
        let (def, steps, setup) = twin::draw_case(&mut case_rng(seed, case), 60);
        report.cases += 1;
        let diff = twin::run_case(&mut sides, &setup, &def, &steps, &mut report.statements)
            .with_context(|| format!("twin case {case} of seed {seed}"))?;
        if let Some(diff) = diff {
            println!(
                "[fuzz twin] seed {seed} case {case} ({setup:?}): MEMORY and rheap differ at: {}",
                diff.sql
            );
            let case = TwinCase {
                seed,
                case,
                setup: &setup,
                def: &def,
            };
            report
                .mismatches
                .push(shrink_twin(&mut sides, &case, &steps, diff)?);
        }
        progress.tick(&report);
    }
    report.elapsed = progress.elapsed();
    report.both_full = Some(sides.both_full);
    Ok(report)
}

/// A twin case, as a mismatch names it.
struct TwinCase<'a> {
    seed: u64,
    case: u64,
    setup: &'a twin::Setup,
    def: &'a schema::Table,
}

/// Shrinks a twin case to the steps the difference needs and writes it as an mtr test case
/// of the rheap suite.
fn shrink_twin(
    sides: &mut twin::Sides<'_>,
    c: &TwinCase<'_>,
    steps: &[twin::Step],
    diff: twin::Diff,
) -> Result<Mismatch> {
    let TwinCase {
        seed,
        case,
        setup,
        def,
    } = *c;
    let upto = diff.step.map_or(0, |s| s + 1);
    let mut ran = 0;
    let steps = shrink::ddmin(steps[..upto].to_vec(), SHRINK_BUDGET, |s| {
        Ok(twin::run_case(sides, setup, def, s, &mut ran)?.is_some())
    })?;
    // The shrunk case's own first difference (it may be another statement's).
    let diff = twin::run_case(sides, setup, def, &steps, &mut ran)?.unwrap_or(diff);
    let how = match setup.rheap_side {
        twin::RheapSide::Rheap => {
            "`RHEAP_ENGINE=MEMORY cargo xtask mtr --record NAME`, then run it \
             on RHEAP"
                .to_string()
        }
        twin::RheapSide::MemoryUnderAll => "`RHEAP_ENGINE=MEMORY cargo xtask mtr --record NAME` \
             (MEMORY's table HEAP's), then run it, still with RHEAP_ENGINE=MEMORY, with SET \
             GLOBAL rheap_takeover=ALL added before the CREATE (MEMORY's table rheap's)"
            .to_string(),
    };
    let mut script = format!(
        "# Found by `cargo xtask fuzz --mode twin --seed {seed}` (case {case}): rheap answered\n\
         # differently from MEMORY at:\n#   {}\n\
         # Copy into mtr-tests/mysql-test/rheap/t/, record its result on MEMORY with\n\
         # {how}.\n\
         # Reads whose order MEMORY leaves to row addresses end their ORDER BY with id here,\n\
         # or are --sorted_result when they have none.\n\
         --source include/have_rheap.inc\n{};\n\n{};\n",
        diff.sql,
        setup.settings().join(";\n"),
        def.create("t", None)
    );
    for step in &steps {
        match step {
            twin::Step::Write(sql) => {
                script.push_str(&format!("{};\n", sql.replace("{t}", "t")));
                for check in twin::AFTER_WRITE {
                    script.push_str(&format!("{};\n", check.replace("{t}", "t")));
                }
            }
            twin::Step::Read(sql, order) => {
                let sql = sql.replace("{t}", "t");
                let sql = match order {
                    twin::Order::Exact => sql,
                    _ => match total_order(&sql) {
                        Some(sql) => sql,
                        None => {
                            script.push_str("--sorted_result\n");
                            sql
                        }
                    },
                };
                script.push_str(&format!("{sql};\n"));
            }
            twin::Step::Handler { reads, .. } => {
                script.push_str("HANDLER t OPEN;\n");
                for r in reads {
                    script.push_str(&format!("{};\n", r.replace("{t}", "t")));
                }
                script.push_str("HANDLER t CLOSE;\n");
            }
        }
    }
    script.push_str(
        "DROP TABLE t;\nSET SESSION max_heap_table_size = DEFAULT;\n\
         SET GLOBAL rheap_table_size_limit = DEFAULT;\n",
    );
    let path = out_dir().join(format!("fuzz_twin_{seed}_{case}.test"));
    std::fs::create_dir_all(out_dir())?;
    std::fs::write(&path, &script)?;
    println!(
        "[fuzz twin] shrunk to {} steps; mtr case: {}\n--- MEMORY\n{}--- RHEAP\n{}",
        steps.len(),
        path.display(),
        diff.memory,
        diff.rheap
    );
    Ok(Mismatch {
        mode: Mode::Twin,
        seed,
        case,
        statement: diff.sql,
        want: diff.memory.to_string(),
        got: diff.rheap.to_string(),
        script: path,
    })
}

/// `sql` (a read with an ORDER BY) ordered totally: `id` added as the last sort key, before a
/// LIMIT. None when it has no ORDER BY.
fn total_order(sql: &str) -> Option<String> {
    sql.find(" ORDER BY ")?;
    Some(match sql.rfind(" LIMIT ") {
        Some(at) => format!("{}, id{}", &sql[..at], &sql[at..]),
        None => format!("{sql}, id"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_order_by_is_made_total_with_id() {
        assert_eq!(
            total_order("SELECT * FROM t ORDER BY a DESC LIMIT 2").as_deref(),
            Some("SELECT * FROM t ORDER BY a DESC, id LIMIT 2")
        );
        assert_eq!(
            total_order("SELECT * FROM t ORDER BY a").as_deref(),
            Some("SELECT * FROM t ORDER BY a, id")
        );
        assert_eq!(total_order("SELECT * FROM t WHERE a > 1"), None);
    }
}
