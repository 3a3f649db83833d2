//! The timed part: every cell (workload × clients × configuration) once per round, rounds
//! interleaved so that the machine's noise falls on every configuration alike, the first round
//! a warm-up that is not counted. Only one configuration is measured at any moment.
//!
//! Within a round the configurations of a cell come in a fresh (seeded) random order: a fixed
//! or rotated order would have each configuration follow mostly the same other one, whose
//! after-effects (caches it left cold, the kernel's work on what it unmapped) would then fall
//! on that one configuration every time.

use crate::progress::Progress;
use crate::schema::Rng;
use crate::system::Configuration;
use crate::workload::Workload;
use anyhow::{anyhow, Result};
use mysql::prelude::Queryable;
use mysql::Conn;
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

/// The order of a cell's configurations in each round: a seeded shuffle, the same from run to
/// run.
pub struct Order(Rng);

impl Order {
    /// The generator's seed.
    const SEED: u64 = 0x0bde_12ca_5e5e;

    pub fn new() -> Order {
        Order(Rng::new(Self::SEED))
    }

    /// `0..n` in the next random order (Fisher–Yates).
    pub fn shuffled(&mut self, n: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = self.0.range(0, i as u64) as usize;
            v.swap(i, j);
        }
        v
    }
}

impl Default for Order {
    fn default() -> Self {
        Order::new()
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
    // Each configuration's connections stay open for the whole run, so that no cell pays for
    // (or overlaps with) connecting and disconnecting clients.
    let most = plan.clients.iter().copied().max().unwrap_or(0);
    let mut conns = configs
        .iter()
        .map(|c| (0..most).map(|_| c.conn()).collect::<Result<Vec<_>>>())
        .collect::<Result<Vec<_>>>()?;
    let warm = usize::from(!plan.warmup.is_zero());
    let mut order = Order::new();
    let mut progress = Progress::new((plan.rounds + warm) * plan.cells_per_round(configs.len()));
    for round in 0..plan.rounds + warm {
        let counted = round >= warm;
        let cell = if counted { plan.cell } else { plan.warmup };
        for (w, workload) in plan.workloads.iter().enumerate() {
            for (k, &clients) in plan.clients.iter().enumerate() {
                for c in order.shuffled(configs.len()) {
                    let rate = measure(&mut conns[c][..clients], &iterations[w], cell)?;
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

/// A thread per connection (a client each) runs the iteration's statements in a loop (each
/// starting at its own offset) until `length` has passed; returns statements per second: the
/// sum over clients of the statements each completed ÷ the time from the common start to the
/// end of its last one. (Dividing all statements by the time until the slowest client's last
/// statement ends would count, in short cells, the idle tail of the clients that finished
/// first.)
pub fn measure(conns: &mut [Conn], iteration: &Arc<Vec<String>>, length: Duration) -> Result<f64> {
    let clients = conns.len();
    let barrier = Arc::new(Barrier::new(clients + 1));
    std::thread::scope(|scope| -> Result<f64> {
        let handles: Vec<_> = conns
            .iter_mut()
            .enumerate()
            .map(|(i, conn)| {
                let barrier = barrier.clone();
                let stmts = iteration.clone();
                scope.spawn(move || -> Result<f64> {
                    let mut next = i * stmts.len() / clients;
                    barrier.wait();
                    let start = Instant::now();
                    let deadline = start + length;
                    let mut done = 0u64;
                    while Instant::now() < deadline {
                        conn.query_drop(&stmts[next])?;
                        next = (next + 1) % stmts.len();
                        done += 1;
                    }
                    Ok(done as f64 / start.elapsed().as_secs_f64())
                })
            })
            .collect();
        barrier.wait();
        let mut rate = 0.0;
        for h in handles {
            rate += h
                .join()
                .map_err(|_| anyhow!("a client thread panicked"))??;
        }
        Ok(rate)
    })
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
    use super::Order;

    #[test]
    fn every_configuration_comes_after_every_other() {
        let n = 4;
        let mut order = Order::new();
        let mut follows = vec![vec![0u32; n]; n];
        let mut first = vec![0u32; n];
        for _ in 0..400 {
            let o = order.shuffled(n);
            let mut seen = o.clone();
            seen.sort();
            assert_eq!(seen, (0..n).collect::<Vec<_>>(), "a round runs each once");
            first[o[0]] += 1;
            for w in o.windows(2) {
                follows[w[1]][w[0]] += 1;
            }
        }
        for (c, before) in follows.iter().enumerate() {
            for (b, &times) in before.iter().enumerate() {
                if b != c {
                    assert!(
                        times > 50,
                        "{c} came after {b} only {times} times in 400 rounds"
                    );
                }
            }
            assert!(first[c] > 50, "{c} came first only {} times", first[c]);
        }
        assert_eq!(Order::new().shuffled(n), Order::new().shuffled(n), "seeded");
    }

    #[test]
    fn median_and_spread() {
        assert_eq!(super::median_spread(&[3.0, 1.0, 2.0]), (2.0, 1.0));
        assert_eq!(super::median_spread(&[4.0, 1.0, 2.0, 3.0]), (2.5, 1.2));
        assert_eq!(super::median_spread(&[]), (0.0, 0.0));
    }
}
