//! Running a command while its output streams line by line (progress for long runs).

use anyhow::Result;
use std::io::{BufRead, BufReader};

/// Runs `cmd` (stderr merged into stdout), calling `on_line` for each output line as it
/// arrives; returns whether the command exited 0.
pub fn stream(cmd: duct::Expression, mut on_line: impl FnMut(&str) -> Result<()>) -> Result<bool> {
    let reader = cmd.stderr_to_stdout().unchecked().reader()?;
    let mut lines = BufReader::new(&reader);
    let mut line = String::new();
    while lines.read_line(&mut line)? > 0 {
        on_line(&line)?;
        line.clear();
    }
    // At EOF duct has waited for the child, so try_wait has its status.
    Ok(reader.try_wait()?.is_some_and(|o| o.status.success()))
}
