//! The timed part: every cell (workload × clients × configuration) once per round, rounds
//! interleaved so that the machine's noise falls on every configuration alike, the first round
//! a warm-up that is not counted. Only one configuration is measured at any moment.

use crate::progress::Progress;
use crate::system::Configuration;
use crate::workload::Workload;
use anyhow::{anyhow, Result};
use mysql::prelude::Queryable;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// What to measure, and how long.
#[derive(Debug, Clone)]
pub struct Plan {
    pub workloads: Vec<Workload>,
    pub clients: Vec<usize>,
    /// Counted rounds.
    pub rounds: usize,
    /// Length of one cell in a counted round.
    pub cell: Duration,
    /// Length of one cell in the warm-up round (zero: no warm-up).
    pub warmup: Duration,
}

impl Plan {
    pub fn cells_per_round(&self, configs: usize) -> usize {
        self.workloads.len() * self.clients.len() * configs
    }

    /// Roughly how long the timed rounds take.
    pub fn estimate(&self, configs: usize) -> Duration {
        (self.cell * self.rounds as u32 + self.warmup) * self.cells_per_round(configs) as u32
    }
}

/// One cell's counted rounds.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    /// Statements per second, one per counted round.
    pub stmt_per_s: Vec<f64>,
}

/// Indexed by workload, clients, configuration (as in the plan and the configuration list).
pub struct Measurements {
    pub cells: Vec<Vec<Vec<Samples>>>,
}

/// Runs the plan over the running configurations; `iterations[w]` is workload `w`'s iteration.
pub fn run(
    plan: &Plan,
    configs: &[Configuration],
    iterations: &[Arc<Vec<String>>],
) -> Result<Measurements> {
    let mut m = Measurements {
        cells: vec![
            vec![vec![Samples::default(); configs.len()]; plan.clients.len()];
            plan.workloads.len()
        ],
    };
    let warm = usize::from(!plan.warmup.is_zero());
    let mut progress = Progress::new((plan.rounds + warm) * plan.cells_per_round(configs.len()));
    for round in 0..plan.rounds + warm {
        let counted = round >= warm;
        let cell = if counted { plan.cell } else { plan.warmup };
        for (w, workload) in plan.workloads.iter().enumerate() {
            for (k, &clients) in plan.clients.iter().enumerate() {
                // Rotate the order of configurations from round to round.
                for i in 0..configs.len() {
                    let c = (i + round) % configs.len();
                    let rate = measure(&configs[c], &iterations[w], clients, cell)?;
                    if counted {
                        m.cells[w][k][c].stmt_per_s.push(rate);
                    }
                    progress.step(&format!(
                        "round {}{} {} {clients} clients {}",
                        round + 1 - warm,
                        if counted { "" } else { " (warm-up)" },
                        workload.name,
                        configs[c].label()
                    ));
                }
            }
        }
    }
    Ok(m)
}

/// `clients` threads, each on its own connection, run the iteration's statements in a loop
/// (each starting at its own offset) until `length` has passed; returns statements per second
/// over the cell's wall time.
pub fn measure(
    config: &Configuration,
    iteration: &Arc<Vec<String>>,
    clients: usize,
    length: Duration,
) -> Result<f64> {
    let mut conns = (0..clients)
        .map(|_| config.conn())
        .collect::<Result<Vec<_>>>()?;
    let barrier = Arc::new(Barrier::new(clients + 1));
    let (elapsed, total) = std::thread::scope(|scope| -> Result<(Duration, u64)> {
        let handles: Vec<_> = conns
            .iter_mut()
            .enumerate()
            .map(|(i, conn)| {
                let barrier = barrier.clone();
                let stmts = iteration.clone();
                scope.spawn(move || -> Result<u64> {
                    let mut next = i * stmts.len() / clients;
                    barrier.wait();
                    let deadline = Instant::now() + length;
                    let mut done = 0u64;
                    while Instant::now() < deadline {
                        conn.query_drop(&stmts[next])?;
                        next = (next + 1) % stmts.len();
                        done += 1;
                    }
                    Ok(done)
                })
            })
            .collect();
        barrier.wait();
        let t0 = Instant::now();
        let mut total = 0;
        for h in handles {
            total += h
                .join()
                .map_err(|_| anyhow!("a client thread panicked"))??;
        }
        Ok((t0.elapsed(), total))
    })?;
    Ok(total as f64 / elapsed.as_secs_f64())
}

/// The median and the spread ((max − min) / median) of a cell's rounds.
pub fn median_spread(xs: &[f64]) -> (f64, f64) {
    if xs.is_empty() {
        return (0.0, 0.0);
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    let spread = if median > 0.0 {
        (v[n - 1] - v[0]) / median
    } else {
        0.0
    };
    (median, spread)
}

#[cfg(test)]
mod tests {
    #[test]
    fn median_and_spread() {
        assert_eq!(super::median_spread(&[3.0, 1.0, 2.0]), (2.0, 1.0));
        assert_eq!(super::median_spread(&[4.0, 1.0, 2.0, 3.0]), (2.5, 1.2));
        assert_eq!(super::median_spread(&[]), (0.0, 0.0));
    }
}
