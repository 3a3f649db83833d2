//! The container recipe, proven without a Docker engine (`cargo xtask container-recipe`): the
//! instructions of `docker/Dockerfile` themselves, read and run in order in a fresh minimal
//! Debian 12 root ([`crate::root`]: `debootstrap --variant=minbase bookworm`, what the official
//! `debian:bookworm` image is made of), then the commands of the compose services, `ci/test`
//! and `ci/bench --smoke`, as `docker compose run` would start them. The Dockerfile is the one
//! list both read, so the recipe and its proof cannot drift apart: an instruction this runner
//! does not interpret fails the run instead of being skipped.
//!
//! What it interprets: `FROM` (a `debian:bookworm` tag, which the root stands for), `SHELL`,
//! `ENV`, `WORKDIR`, `COPY` (from the build context, the repository's working tree without what
//! `.dockerignore` leaves out), `RUN` (through the `SHELL`, in the `WORKDIR`, with the `ENV`;
//! BuildKit's `--mount` options are build caches and are left out) and `CMD`. What a root is
//! not: an isolated network and process space, and Docker's capability limits (the compose file
//! adds the ones the commands need).

use crate::docker_check::{instructions, DOCKERFILE};
use crate::root::{output, Root};
use anyhow::{bail, ensure, Context, Result};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// One step of the recipe, as this runner takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// `FROM`: the image the root stands for.
    From(String),
    /// `SHELL`: the shell `RUN` lines go through.
    Shell(Vec<String>),
    /// `ENV`: (name, value as written; `$NAME` expanded when it runs).
    Env(Vec<(String, String)>),
    Workdir(String),
    /// `COPY` (sources in the build context, destination).
    Copy(Vec<String>, String),
    /// `RUN` in shell form.
    Run(String),
    /// `CMD`, exec form.
    Cmd(Vec<String>),
}

/// The Dockerfile's steps; an instruction this runner does not interpret is an error.
pub fn plan(text: &str) -> Result<Vec<Step>> {
    let mut steps = Vec::new();
    for (kw, args) in instructions(text) {
        let step = match kw.as_str() {
            "FROM" => Step::From(args),
            "SHELL" => Step::Shell(serde_json::from_str(&args).context("SHELL takes a JSON list")?),
            "ENV" => Step::Env(
                args.split_whitespace()
                    .map(|kv| {
                        kv.split_once('=')
                            .map(|(k, v)| (k.to_string(), v.trim_matches('"').to_string()))
                            .with_context(|| format!("ENV {args}: only NAME=value is read"))
                    })
                    .collect::<Result<_>>()?,
            ),
            "WORKDIR" => Step::Workdir(args),
            "COPY" => {
                let mut words: Vec<String> = args.split_whitespace().map(String::from).collect();
                ensure!(
                    words.len() >= 2 && !words[0].starts_with("--"),
                    "COPY {args}: only plain COPY SRC... DEST is read"
                );
                let dest = words.pop().expect("two words");
                Step::Copy(words, dest)
            }
            "RUN" => {
                // Build caches (--mount=type=cache,...) change speed, not what is built.
                let words: Vec<&str> = args.split(' ').collect();
                let skip = words
                    .iter()
                    .take_while(|w| w.starts_with("--mount="))
                    .count();
                let cmd = words[skip..].join(" ");
                ensure!(
                    !cmd.trim_start().starts_with('['),
                    "RUN {args}: only the shell form is read"
                );
                Step::Run(cmd.trim().to_string())
            }
            "CMD" => {
                Step::Cmd(serde_json::from_str(&args).context("CMD: only the exec form is read")?)
            }
            other => bail!("{DOCKERFILE}: {other} is not interpreted by the container-recipe run"),
        };
        steps.push(step);
    }
    Ok(steps)
}

/// `$NAME` and `${NAME}` in `value`, from `env`, as Docker expands them in `ENV`.
fn expand(value: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, tail) = if let Some(braced) = after.strip_prefix('{') {
            match braced.split_once('}') {
                Some((n, t)) => (n, t),
                None => (braced, ""),
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        out.push_str(env.get(name).map_or("", String::as_str));
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// Top-level names of the build context that `.dockerignore` leaves out (ours lists plain
/// names only; a pattern is refused rather than guessed at).
fn ignored(context: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(context.join(".dockerignore")).unwrap_or_default();
    let mut out = Vec::new();
    for l in text.lines().map(str::trim) {
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        ensure!(
            !l.contains(['*', '?', '[', '!']) && !l.trim_matches('/').contains('/'),
            ".dockerignore: '{l}' is a pattern the container-recipe run does not read"
        );
        out.push(l.trim_matches('/').to_string());
    }
    Ok(out)
}

/// Runs the recipe in a fresh root and then each of `commands` (e.g. `ci/test`), streaming
/// their output; the last lines of each command's output, or the first failure.
pub fn run(context: &Path, commands: &[Vec<String>]) -> Result<Vec<(String, String)>> {
    let text = std::fs::read_to_string(context.join(DOCKERFILE))?;
    let steps = plan(&text)?;
    let started = Instant::now();
    let (root, how) = Root::fresh("container")?;
    println!("[recipe] root: {how}");
    let mut env: BTreeMap<String, String> = [
        (
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        ),
        ("HOME", "/root"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let mut shell = vec!["/bin/sh".to_string(), "-c".to_string()];
    let mut workdir = "/".to_string();
    let ignored = ignored(context)?;
    let mut tails = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        println!(
            "[recipe] step {}/{}: {step:?} ({:.0?} so far)",
            i + 1,
            steps.len(),
            started.elapsed()
        );
        match step {
            Step::From(image) => ensure!(
                image == "debian:bookworm" || image.starts_with("debian:bookworm-"),
                "FROM {image}: the root stands for debian:bookworm only"
            ),
            Step::Shell(s) => shell = s.clone(),
            Step::Env(pairs) => {
                for (k, v) in pairs {
                    let v = expand(v, &env);
                    env.insert(k.clone(), v);
                }
            }
            Step::Workdir(w) => {
                workdir = Path::new(&workdir).join(w).display().to_string();
                std::fs::create_dir_all(root.path(&workdir))?;
            }
            Step::Copy(sources, dest) => {
                let to = root.path(&Path::new(&workdir).join(dest).display().to_string());
                std::fs::create_dir_all(&to)?;
                for src in sources {
                    copy_context(context, src, &to, &ignored)?;
                }
            }
            Step::Run(cmd) => {
                let line = format!("cd {workdir} && {cmd}");
                run_streamed(&root, &shell, &line, &env).with_context(|| format!("RUN {cmd}"))?;
            }
            Step::Cmd(_) => {}
        }
    }
    for command in commands {
        let line = format!("cd {workdir} && {}", command.join(" "));
        println!(
            "[recipe] the container's command: {} ({:.0?} so far)",
            command.join(" "),
            started.elapsed()
        );
        let out = run_streamed(&root, &shell, &line, &env)
            .with_context(|| format!("the container's command {}", command.join(" ")))?;
        tails.push((command.join(" "), crate::root::tail(&out, 25)));
    }
    println!("[recipe] done in {:.0?}", started.elapsed());
    Ok(tails)
}

/// Copies `src` of the build context into the directory `to`, as COPY does: a file into it, a
/// directory's contents (for `.`, every top-level entry but the ignored ones).
fn copy_context(context: &Path, src: &str, to: &Path, ignored: &[String]) -> Result<()> {
    let from = context.join(src);
    if from.is_file() {
        output(Command::new("cp").args(["-a"]).arg(&from).arg(to))?;
        return Ok(());
    }
    for entry in std::fs::read_dir(&from).with_context(|| format!("COPY {src}"))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if src.trim_matches('/') == "." && ignored.contains(&name) {
            continue;
        }
        output(Command::new("cp").args(["-a"]).arg(entry.path()).arg(to))?;
    }
    Ok(())
}

/// Runs `line` through `shell` in the root with exactly `env`, echoing its output as it comes;
/// the whole output, or an error when it exits non-zero.
fn run_streamed(
    root: &Root,
    shell: &[String],
    line: &str,
    env: &BTreeMap<String, String>,
) -> Result<String> {
    let mut args: Vec<String> = vec!["-i".into()];
    args.extend(env.iter().map(|(k, v)| format!("{k}={v}")));
    args.extend(shell.iter().cloned());
    args.push(line.to_string());
    let root_dir = root.path("");
    let mut full: Vec<String> = vec![root_dir.display().to_string(), "/usr/bin/env".into()];
    full.extend(args);
    let mut out = String::new();
    let ok = rheap_harness::process::stream(duct::cmd("chroot", &full), |l| {
        print!("{l}");
        out.push_str(l);
        Ok(())
    })?;
    ensure!(
        ok,
        "exited non-zero; its last lines:\n{}",
        crate::root::tail(&out, 30)
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repositorys_dockerfile_is_read_whole() {
        let text =
            std::fs::read_to_string(rheap_harness::paths::workspace().join(DOCKERFILE)).unwrap();
        let steps = plan(&text).unwrap();
        assert!(matches!(&steps[0], Step::From(i) if i.starts_with("debian:bookworm")));
        assert!(steps
            .iter()
            .any(|s| matches!(s, Step::Run(r) if r == "ci/setup")));
        assert!(steps
            .iter()
            .any(|s| matches!(s, Step::Cmd(c) if c == &["ci/test"])));
        let ignored = ignored(&rheap_harness::paths::workspace()).unwrap();
        assert!(ignored.contains(&"target".to_string()));
    }

    #[test]
    fn unknown_instructions_fail_the_plan() {
        assert!(plan("FROM debian:bookworm\nUSER nobody\n").is_err());
        assert!(plan("FROM debian:bookworm\nRUN [\"ci/setup\"]\n").is_err());
        let steps = plan("RUN --mount=type=cache,target=/x cargo build\n").unwrap();
        assert_eq!(steps, [Step::Run("cargo build".into())]);
    }

    #[test]
    fn env_values_expand_earlier_ones() {
        let env: BTreeMap<String, String> = [("PATH".to_string(), "/bin".to_string())].into();
        assert_eq!(
            expand("/root/.cargo/bin:$PATH", &env),
            "/root/.cargo/bin:/bin"
        );
        assert_eq!(expand("${PATH}:/x", &env), "/bin:/x");
        assert_eq!(expand("$NOPE/y", &env), "/y");
    }
}
