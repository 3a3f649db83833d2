//! Shrinking a failing case: delta debugging (ddmin) over its steps.

use anyhow::Result;
use std::time::{Duration, Instant};

/// The smallest sublist of `items` (keeping their order) for which `fails` still holds, as
/// far as ddmin finds it within `budget`: it tries dropping ever smaller chunks, and keeps
/// any list that still fails. `fails(items)` must hold for the list given.
pub fn ddmin<T: Clone>(
    items: Vec<T>,
    budget: Duration,
    mut fails: impl FnMut(&[T]) -> Result<bool>,
) -> Result<Vec<T>> {
    let started = Instant::now();
    let mut items = items;
    let mut chunks = 2usize;
    while items.len() >= 2 && started.elapsed() < budget {
        let size = items.len().div_ceil(chunks);
        let mut shrunk = false;
        for start in (0..items.len()).step_by(size) {
            if started.elapsed() >= budget {
                break;
            }
            let end = (start + size).min(items.len());
            let rest: Vec<T> = items[..start]
                .iter()
                .chain(&items[end..])
                .cloned()
                .collect();
            if !rest.is_empty() && fails(&rest)? {
                items = rest;
                chunks = (chunks - 1).max(2);
                shrunk = true;
                break;
            }
        }
        if !shrunk {
            if size == 1 {
                break;
            }
            chunks = (chunks * 2).min(items.len());
        }
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_what_the_failure_needs() {
        // Fails while 3 and 7 are both there, in that order.
        let fails = |xs: &[u32]| -> Result<bool> {
            let a = xs.iter().position(|&x| x == 3);
            let b = xs.iter().position(|&x| x == 7);
            Ok(matches!((a, b), (Some(a), Some(b)) if a < b))
        };
        let got = ddmin((0..40).collect(), Duration::from_secs(10), fails).unwrap();
        assert_eq!(got, vec![3, 7]);
    }
}
