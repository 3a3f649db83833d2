//! The timed part: every cell (workload × clients × configuration) once per round, rounds
//! interleaved so that the machine's noise falls on every configuration alike, the first round
//! a warm-up that is not counted. Only one configuration is measured at any moment.
//!
//! The rounds may be split in several *starts* ([`Plan::starts`]): before each, every server
//! is restarted (a clean shutdown and a start on its datadir), and a warm-up round runs again.
//! A server process's layout in memory (where ASLR, its heap and the kernel put things) gives
//! it a speed of its own: on this machine, rheap at 16G and at 16M (which it runs alike)
//! differed by 1.5% over a whole run of 300 rounds, with an interval of 1.009–1.024. With one
//! process per configuration that luck goes whole into a ratio; over several starts it averages
//! out, and the ratios' intervals resample whole starts (`report::paired_interval`).
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
    /// How many times the servers are started for the timed rounds, as asked (read through
    /// [`starts`](Self::starts), which keeps it between 1 and the rounds): the rounds are split
    /// evenly between the starts, each start after a restart of every server (but the first)
    /// and a warm-up round.
    pub starts: usize,
}

impl Plan {
    pub fn cells_per_round(&self, configs: usize) -> usize {
        self.workloads.len() * self.clients.len() * configs
    }

    /// Roughly how long the timed rounds take (restarts not counted).
    pub fn estimate(&self, configs: usize) -> Duration {
        (self.cell * self.rounds as u32 + self.warmup * self.starts() as u32)
            * self.cells_per_round(configs) as u32
    }

    /// [`starts`](Self::starts), at least 1 and at most one per round.
    pub fn starts(&self) -> usize {
        self.starts.clamp(1, self.rounds.max(1))
    }

    /// How many counted rounds start `s` runs (`0..starts()`): an even split.
    pub fn rounds_in_start(&self, s: usize) -> usize {
        start_rounds(self.rounds, self.starts(), s).len()
    }
}

/// Which of `rounds` counted rounds (their indices in a cell's rounds) start `s` of `starts`
/// ran: an even split, in order.
pub fn start_rounds(rounds: usize, starts: usize, s: usize) -> std::ops::Range<usize> {
    s * rounds / starts..(s + 1) * rounds / starts
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

/// Runs the plan over the running configurations (restarting them between starts);
/// `iterations[w]` is workload `w`'s iteration.
pub fn run(
    plan: &Plan,
    configs: &mut [Configuration],
    iterations: &[Arc<Vec<String>>],
) -> Result<Measurements> {
    let mut m = Measurements {
        cells: vec![
            vec![vec![Samples::default(); configs.len()]; plan.clients.len()];
            plan.workloads.len()
        ],
    };
    let most = plan.clients.iter().copied().max().unwrap_or(0);
    let warm = usize::from(!plan.warmup.is_zero());
    let mut order = Order::new();
    let mut progress =
        Progress::new((plan.rounds + warm * plan.starts()) * plan.cells_per_round(configs.len()));
    let mut counted_before = 0;
    for start in 0..plan.starts() {
        if start > 0 {
            restart_all(configs)?;
        }
        // Each configuration's connections stay open for the whole start, so that no cell
        // pays for (or overlaps with) connecting and disconnecting clients.
        let mut conns = configs
            .iter()
            .map(|c| (0..most).map(|_| c.conn()).collect::<Result<Vec<_>>>())
            .collect::<Result<Vec<_>>>()?;
        let rounds = plan.rounds_in_start(start);
        for round in 0..rounds + warm {
            let counted = round >= warm;
            let cell = if counted { plan.cell } else { plan.warmup };
            for (w, workload) in plan.workloads.iter().enumerate() {
                for (k, &clients) in plan.clients.iter().enumerate() {
                    for c in order.shuffled(configs.len()) {
                        let rate = measure(&mut conns[c][..clients], &iterations[w], cell)?;
                        if counted {
                            m.cells[w][k][c].stmt_per_s.push(rate);
                        }
                        let round = if counted {
                            format!("round {}", counted_before + round + 1 - warm)
                        } else {
                            "warm-up".to_string()
                        };
                        progress.step(&format!(
                            "start {}/{} {round} {} {clients} clients {}",
                            start + 1,
                            plan.starts(),
                            workload.name,
                            configs[c].label()
                        ));
                    }
                }
            }
        }
        counted_before += rounds;
    }
    Ok(m)
}

/// Restarts every configuration's server, all at once.
fn restart_all(configs: &mut [Configuration]) -> Result<()> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = configs
            .iter_mut()
            .map(|c| scope.spawn(move || c.restart()))
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().map_err(|_| anyhow!("a restart thread panicked"))?)
    })
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
    fn starts_split_the_rounds_evenly() {
        let plan = |rounds, starts| super::Plan {
            workloads: vec![],
            clients: vec![16],
            rounds,
            cell: std::time::Duration::from_millis(50),
            warmup: std::time::Duration::ZERO,
            starts,
        };
        let split = |p: &super::Plan| -> Vec<usize> {
            (0..p.starts()).map(|s| p.rounds_in_start(s)).collect()
        };
        assert_eq!(split(&plan(300, 10)), vec![30; 10]);
        assert_eq!(split(&plan(10, 4)), vec![2, 3, 2, 3]);
        assert_eq!(split(&plan(5, 0)), vec![5], "at least one start");
        assert_eq!(split(&plan(2, 5)), vec![1, 1], "at most one per round");
    }

    #[test]
    fn median_and_spread() {
        assert_eq!(super::median_spread(&[3.0, 1.0, 2.0]), (2.0, 1.0));
        assert_eq!(super::median_spread(&[4.0, 1.0, 2.0, 3.0]), (2.5, 1.2));
        assert_eq!(super::median_spread(&[]), (0.0, 0.0));
    }
}
