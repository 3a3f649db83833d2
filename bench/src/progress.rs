//! A progress bar on stderr: redrawn in place on a terminal, one line per tenth otherwise
//! (so that CI logs stay short).

use std::io::{IsTerminal, Write};
use std::time::Instant;

pub struct Progress {
    total: usize,
    done: usize,
    started: Instant,
    tty: bool,
    last_tenth: usize,
}

impl Progress {
    pub fn new(total: usize) -> Progress {
        Progress {
            total: total.max(1),
            done: 0,
            started: Instant::now(),
            tty: std::io::stderr().is_terminal(),
            last_tenth: 0,
        }
    }

    /// One more step done; `what` names the next one.
    pub fn step(&mut self, what: &str) {
        self.done += 1;
        let frac = self.done as f64 / self.total as f64;
        let elapsed = self.started.elapsed().as_secs_f64();
        let eta = if self.done > 0 {
            elapsed / frac - elapsed
        } else {
            0.0
        };
        let width = 30;
        let filled = (frac * width as f64).round() as usize;
        let line = format!(
            "[{}{}] {}/{} {:>4.0}s left  {what}",
            "#".repeat(filled),
            ".".repeat(width - filled),
            self.done,
            self.total,
            eta
        );
        let mut err = std::io::stderr().lock();
        if self.tty {
            let _ = write!(err, "\r\x1b[2K{line}");
            if self.done == self.total {
                let _ = writeln!(err);
            }
        } else {
            let tenth = self.done * 10 / self.total;
            if tenth != self.last_tenth || self.done == 1 {
                self.last_tenth = tenth;
                let _ = writeln!(err, "{line}");
            }
        }
        let _ = err.flush();
    }
}
