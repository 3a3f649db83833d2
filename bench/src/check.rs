//! The correctness check before anything is timed: every benchmark statement returns the same
//! result set on every configuration, and each workload makes the temp tables it is meant to
//! measure (counted with `Created_tmp_tables`, and `Rheap_internal_tables_created` or
//! `Rheap_aria_tables` where rheap is loaded), on disk where it is meant to
//! (`Created_tmp_disk_tables`).

use crate::system::Configuration;
use crate::workload::{Temp, Workload};
use anyhow::{bail, Context, Result};
use mysql::prelude::Queryable;
use mysql::Conn;
use rheap_harness::sql::{query_cells, session_status};
use serde::Serialize;

/// Columns whose values are estimates or times that differ from server to server (InnoDB's
/// statistics, file sizes, creation times): rendered as `#`.
const UNSTABLE_COLUMNS: &[&str] = &[
    "Rows",
    "Avg_row_length",
    "Data_length",
    "Max_data_length",
    "Index_length",
    "Data_free",
    "Create_time",
    "Update_time",
    "Check_time",
    "Cardinality",
];

/// A result set as text: the column names, then the rows sorted (a result *set*: statements
/// without ORDER BY may return rows in any order), unstable columns as `#`.
pub fn result_set(conn: &mut Conn, sql: &str) -> Result<Vec<String>> {
    let (names, rows) = query_cells(conn, sql)?;
    let mut lines: Vec<String> = rows
        .into_iter()
        .map(|mut cells| {
            for (cell, name) in cells.iter_mut().zip(&names) {
                if UNSTABLE_COLUMNS.contains(&name.as_str()) {
                    *cell = "#".into();
                }
            }
            cells.join("\t")
        })
        .collect();
    lines.sort();
    lines.insert(0, names.join("\t"));
    Ok(lines)
}

/// What one workload's iteration did, per configuration.
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadCheck {
    pub workload: &'static str,
    pub statements: usize,
    /// Rows returned over the iteration (the same on every configuration, or the check fails).
    pub rows: usize,
    /// Per configuration: the fewest temp tables one statement created (`Created_tmp_tables`).
    pub min_tmp_tables: Vec<u64>,
    /// Per configuration: temp tables rheap created over the iteration (None: not loaded):
    /// in MEMORY's place, or in Aria's for the workloads of [`Temp::AriaBlobs`].
    pub rheap_tmp_tables: Vec<Option<u64>>,
    /// Per configuration: temp tables put on disk over the iteration
    /// (`Created_tmp_disk_tables`).
    pub disk_tmp_tables: Vec<u64>,
}

/// The counters a statement moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Counters {
    tmp_tables: u64,
    disk_tables: u64,
    rheap: Option<u64>,
}

fn counters(conn: &mut Conn, temp: Temp) -> Result<Counters> {
    let served = match temp {
        Temp::AriaBlobs => "Rheap_aria_tables",
        _ => "Rheap_internal_tables_created",
    };
    let rheap: Option<(String, u64)> =
        conn.query_first(format!("SHOW GLOBAL STATUS LIKE '{served}'"))?;
    Ok(Counters {
        tmp_tables: session_status(conn, "Created_tmp_tables")?,
        disk_tables: session_status(conn, "Created_tmp_disk_tables")?,
        rheap: rheap.map(|r| r.1),
    })
}

/// How much reading the counters itself moves them (SHOW STATUS makes temp tables too).
fn counter_cost(conn: &mut Conn, temp: Temp) -> Result<Counters> {
    let a = counters(conn, temp)?;
    let b = counters(conn, temp)?;
    Ok(Counters {
        tmp_tables: b.tmp_tables - a.tmp_tables,
        disk_tables: b.disk_tables - a.disk_tables,
        rheap: b.rheap.zip(a.rheap).map(|(b, a)| b - a),
    })
}

/// Runs every workload's iteration on every configuration and compares the result sets with
/// the first configuration's; fails on the first difference.
pub fn check(
    configs: &[Configuration],
    workloads: &[Workload],
    iterations: &[std::sync::Arc<Vec<String>>],
) -> Result<Vec<WorkloadCheck>> {
    let mut conns: Vec<Conn> = configs.iter().map(|c| c.conn()).collect::<Result<_>>()?;
    let mut out = Vec::new();
    for (w, workload) in workloads.iter().enumerate() {
        let costs: Vec<Counters> = conns
            .iter_mut()
            .map(|c| counter_cost(c, workload.temp))
            .collect::<Result<_>>()?;
        let mut check = WorkloadCheck {
            workload: workload.name,
            statements: iterations[w].len(),
            rows: 0,
            min_tmp_tables: vec![u64::MAX; configs.len()],
            rheap_tmp_tables: costs.iter().map(|c| c.rheap.map(|_| 0)).collect(),
            disk_tmp_tables: vec![0; configs.len()],
        };
        for sql in iterations[w].iter() {
            let mut first: Option<Vec<String>> = None;
            for (c, conn) in conns.iter_mut().enumerate() {
                let before = counters(conn, workload.temp)?;
                let rows = result_set(conn, sql)
                    .with_context(|| format!("{} on {}", sql, configs[c].label()))?;
                let after = counters(conn, workload.temp)?;
                let made =
                    (after.tmp_tables - before.tmp_tables).saturating_sub(costs[c].tmp_tables);
                check.min_tmp_tables[c] = check.min_tmp_tables[c].min(made);
                check.disk_tmp_tables[c] +=
                    (after.disk_tables - before.disk_tables).saturating_sub(costs[c].disk_tables);
                if let (Some(total), Some(a), Some(b), Some(cost)) = (
                    check.rheap_tmp_tables[c].as_mut(),
                    after.rheap,
                    before.rheap,
                    costs[c].rheap,
                ) {
                    *total += (a - b).saturating_sub(cost);
                }
                match &first {
                    None => {
                        check.rows += rows.len() - 1;
                        first = Some(rows);
                    }
                    Some(expected) if *expected != rows => bail!(
                        "{sql}\nreturns a different result on {} than on {}:\n{}\nversus\n{}",
                        configs[c].label(),
                        configs[0].label(),
                        rows.join("\n"),
                        expected.join("\n")
                    ),
                    Some(_) => {}
                }
            }
        }
        out.push(check);
    }
    Ok(out)
}

/// Fails unless each workload made the temp tables it is meant to measure: one or more per
/// statement (except the mixed ORM start-up), and on a system where rheap takes over, rheap's
/// for every statement of the HEAP, information_schema and blog workloads (where it is loaded
/// and does not take over, none at all). A blog workload puts one or more tables on disk per
/// statement where rheap does not take over, and none where it does.
pub fn validate(
    checks: &[WorkloadCheck],
    workloads: &[Workload],
    configs: &[Configuration],
) -> Result<()> {
    for (check, workload) in checks.iter().zip(workloads) {
        for (c, config) in configs.iter().enumerate() {
            let what = format!("{} on {}", workload.name, config.label());
            if workload.temp != Temp::Mixed && check.min_tmp_tables[c] < 1 {
                bail!("{what}: a statement made no temporary table");
            }
            let (n, disk) = (check.statements as u64, check.disk_tmp_tables[c]);
            if workload.temp == Temp::AriaBlobs {
                match config.system.takes_over() {
                    true if disk != 0 => bail!("{what}: {disk} temporary tables on disk"),
                    false if disk < n => {
                        bail!("{what}: {disk} temporary tables on disk for {n} statements")
                    }
                    _ => {}
                }
            }
            let Some(rheap) = check.rheap_tmp_tables[c] else {
                continue;
            };
            if !config.system.takes_over() {
                if rheap != 0 {
                    bail!("{what}: rheap made {rheap} temp tables, but does not take over");
                }
                continue;
            }
            match workload.temp {
                Temp::Heap | Temp::SchemaBlobs | Temp::AriaBlobs if rheap < n => {
                    bail!("{what}: rheap made {rheap} temp tables for {n} statements")
                }
                Temp::Mixed if rheap == 0 => bail!("{what}: rheap made no temp table"),
                _ => {}
            }
        }
    }
    Ok(())
}
