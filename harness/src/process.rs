//! Running a command while its output streams line by line (progress for long runs), or to
//! its end for its output.

use anyhow::{bail, Context, Result};
use std::io::{BufRead, BufReader};
use std::process::Command;

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

/// Runs `cmd` to its end; its standard output, or an error naming the command with the last
/// lines of both streams.
pub fn output(cmd: &mut Command) -> Result<String> {
    let out = cmd.output().with_context(|| format!("running {cmd:?}"))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        bail!(
            "{cmd:?} failed ({}):\n{}{}",
            out.status,
            tail(&text, 30),
            tail(&String::from_utf8_lossy(&out.stderr), 30)
        );
    }
    Ok(text)
}

/// The last `n` lines of `text`.
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut s = lines[lines.len().saturating_sub(n)..].join("\n");
    s.push('\n');
    s
}
