//! What ci/test checks of docker/ without a Docker engine (the development machine and CI have
//! a docker client but no engine, so the image itself is not built there):
//!
//! - `docker/Dockerfile` passes hadolint (every finding, down to `info`, fails it);
//! - `docker/compose.yaml` validates against the Compose Specification's JSON schema, with
//!   check-jsonschema (`--builtin-schema vendor.compose-spec`: the package ships the schema, so
//!   nothing is downloaded at check time and the pinned package fixes the schema version; the
//!   `docker-compose` v1 parser on PyPI is unmaintained and no longer installs on current
//!   Python), and has the services the README names: `test` and `bench`, built from
//!   docker/Dockerfile with the repository as context, `bench` keeping target/bench on a volume;
//! - every script the container calls (RUN, CMD, ENTRYPOINT; compose `command`, `entrypoint`)
//!   exists in the repository, is executable (and tracked as such by git, when this is a
//!   checkout: a clone is what gets built), and is not left out of the build context by
//!   .dockerignore.
//!
//! ci/setup installs the two tools, pinned, in a venv at `$RHEAP_TOOLS_DIR` (default
//! /opt/rheap-tools).

use anyhow::{bail, Context, Result};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use yaml_rust2::{Yaml, YamlLoader};

pub const DOCKERFILE: &str = "docker/Dockerfile";
pub const COMPOSE: &str = "docker/compose.yaml";
/// Where the image holds the repository (its WORKDIR).
pub const IN_IMAGE: &str = "/rheap";
/// The scripts the container must call: set-up while building, then the two commands.
pub const REQUIRED_SCRIPTS: &[&str] = &["ci/setup", "ci/test", "ci/bench"];

/// One check and, when it failed, why.
pub struct Check {
    pub name: String,
    pub problem: Option<String>,
}

/// Every check of `root`'s docker/, each printed as it completes.
pub fn run(root: &Path) -> Vec<Check> {
    let dockerfile = root.join(DOCKERFILE);
    let compose = root.join(COMPOSE);
    let checks = [
        ("hadolint docker/Dockerfile", hadolint(&dockerfile)),
        (
            "compose.yaml against the compose-spec schema",
            compose_schema(&compose),
        ),
        (
            "compose.yaml services test and bench",
            compose_services(root),
        ),
        ("scripts the container calls", scripts(root)),
    ];
    checks
        .into_iter()
        .map(|(name, r)| {
            let problem = match r {
                Ok(what) => {
                    println!("ok: {name}: {what}");
                    None
                }
                Err(e) => {
                    println!("FAILED: {name}: {e:#}");
                    Some(format!("{e:#}"))
                }
            };
            Check {
                name: name.into(),
                problem,
            }
        })
        .collect()
}

/// The venv ci/setup installs the linters into.
pub fn tools_dir() -> PathBuf {
    std::env::var_os("RHEAP_TOOLS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/opt/rheap-tools".into())
}

fn tool(name: &str) -> Result<PathBuf> {
    let path = tools_dir().join("bin").join(name);
    if !path.is_file() {
        bail!(
            "{} is missing: run ci/setup, which installs it (set RHEAP_TOOLS_DIR if it went \
             elsewhere)",
            path.display()
        );
    }
    Ok(path)
}

/// Runs a tool; its output when it fails (or cannot run).
fn run_tool(name: &str, args: &[&Path], flags: &[&str]) -> Result<String> {
    let mut cmd = std::process::Command::new(tool(name)?);
    cmd.args(flags).args(args);
    let out = cmd.output().with_context(|| format!("running {name}"))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        bail!("{name} rejects it ({}):\n{}", out.status, text.trim_end());
    }
    Ok(text.trim().to_string())
}

/// hadolint on a Dockerfile; any finding fails.
pub fn hadolint(dockerfile: &Path) -> Result<String> {
    run_tool(
        "hadolint",
        &[dockerfile],
        &["--no-color", "--failure-threshold", "info"],
    )?;
    Ok("no findings".into())
}

/// A compose file against the Compose Specification schema that check-jsonschema ships.
pub fn compose_schema(compose: &Path) -> Result<String> {
    run_tool(
        "check-jsonschema",
        &[compose],
        &["--builtin-schema", "vendor.compose-spec"],
    )
}

fn load_yaml(path: &Path) -> Result<Yaml> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut docs =
        YamlLoader::load_from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    if docs.len() != 1 {
        bail!(
            "{} holds {} YAML documents, not one",
            path.display(),
            docs.len()
        );
    }
    Ok(docs.remove(0))
}

/// A mapping with its YAML merge keys (`<<: *anchor`) applied, as compose applies them.
fn merged(y: &Yaml) -> Yaml {
    let Yaml::Hash(h) = y else { return y.clone() };
    let merge_key = Yaml::String("<<".into());
    let mut out = yaml_rust2::yaml::Hash::new();
    for (k, v) in h.iter().filter(|(k, _)| **k != merge_key) {
        out.insert(k.clone(), v.clone());
    }
    let sources = match h.get(&merge_key) {
        Some(Yaml::Array(a)) => a.clone(),
        Some(m) => vec![m.clone()],
        None => vec![],
    };
    for source in sources {
        if let Yaml::Hash(m) = merged(&source) {
            for (k, v) in m {
                out.entry(k).or_insert(v);
            }
        }
    }
    Yaml::Hash(out)
}

/// The services of a compose file, merge keys applied.
fn services(compose: &Path) -> Result<Vec<(String, Yaml)>> {
    let doc = load_yaml(compose)?;
    let Some(services) = doc["services"].as_hash() else {
        bail!("{} has no services mapping", compose.display());
    };
    Ok(services
        .iter()
        .map(|(k, v)| (k.as_str().unwrap_or("?").to_string(), merged(v)))
        .collect())
}

/// A compose `command`/`entrypoint` (a list, or a string compose splits into words).
fn words(y: &Yaml) -> Option<Vec<String>> {
    match y {
        Yaml::Array(a) => Some(
            a.iter()
                .filter_map(|w| w.as_str().map(String::from))
                .collect(),
        ),
        Yaml::String(s) => Some(s.split_whitespace().map(String::from).collect()),
        _ => None,
    }
}

/// `test` and `bench` build docker/Dockerfile from the repository and run ci/test and
/// ci/bench; `bench` keeps target/bench on a volume.
pub fn compose_services(root: &Path) -> Result<String> {
    let compose = root.join(COMPOSE);
    let services = services(&compose)?;
    let mut problems = Vec::new();
    for (name, script) in [("test", "ci/test"), ("bench", "ci/bench")] {
        let Some((_, s)) = services.iter().find(|(n, _)| n == name) else {
            problems.push(format!("no service {name}"));
            continue;
        };
        let build = &s["build"];
        let context = build["context"].as_str().or_else(|| build.as_str());
        let dir = compose.parent().expect("docker/ holds it");
        match context.map(|c| dir.join(c).canonicalize()) {
            Some(Ok(c)) if root.canonicalize().is_ok_and(|r| r == c) => {}
            _ => problems.push(format!(
                "service {name}: build context {context:?} is not the repository"
            )),
        }
        if build["dockerfile"].as_str() != Some(DOCKERFILE) {
            problems.push(format!(
                "service {name}: build dockerfile is {:?}, not {DOCKERFILE}",
                build["dockerfile"].as_str()
            ));
        }
        let command = words(&s["command"]).unwrap_or_default();
        if command.first().map(|c| c.trim_start_matches("./")) != Some(script) {
            problems.push(format!(
                "service {name}: command {command:?} does not run {script}"
            ));
        }
    }
    let bench_target = format!("{IN_IMAGE}/target/bench");
    if let Some((_, bench)) = services.iter().find(|(n, _)| n == "bench") {
        let mounted = bench["volumes"].as_vec().into_iter().flatten().any(|v| {
            let target = match v {
                Yaml::String(s) => s.split(':').nth(1).map(String::from),
                _ => v["target"].as_str().map(String::from),
            };
            target.as_deref().map(|t| t.trim_end_matches('/')) == Some(bench_target.as_str())
        });
        if !mounted {
            problems.push(format!("service bench mounts no volume on {bench_target}"));
        }
    }
    if !problems.is_empty() {
        bail!("{}", problems.join("; "));
    }
    Ok(format!(
        "test runs ci/test, bench runs ci/bench with {bench_target} on a volume"
    ))
}

/// A Dockerfile's instructions: (keyword in upper case, arguments), continuation lines joined
/// and comment lines dropped, as Docker reads them.
pub fn instructions(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('#') || (trimmed.is_empty() && current.is_empty()) {
            continue;
        }
        match line.trim_end().strip_suffix('\\') {
            Some(part) => {
                current.push_str(part);
                current.push(' ');
            }
            None => {
                current.push_str(line);
                let full = std::mem::take(&mut current);
                let full = full.trim();
                if let Some((kw, rest)) = full.split_once(char::is_whitespace) {
                    out.push((kw.to_uppercase(), rest.trim().to_string()));
                } else if !full.is_empty() {
                    out.push((full.to_uppercase(), String::new()));
                }
            }
        }
    }
    out
}

/// The programs a shell command line starts: the first word of each command (after variable
/// assignments and `exec`/`env`), or the script a shell is given.
pub fn shell_programs(line: &str) -> Vec<String> {
    let spaced = ["&&", "||", ";", "|", "(", ")"]
        .iter()
        .fold(line.to_string(), |s, op| s.replace(op, " ; "));
    let mut out = Vec::new();
    for command in spaced.split(" ; ") {
        let words: Vec<&str> = command
            .split_whitespace()
            .map(|w| w.trim_matches(|c| c == '"' || c == '\''))
            .collect();
        out.extend(program_of(&words));
    }
    out
}

/// The program (or script) an exec-form word list starts.
fn program_of(words: &[&str]) -> Vec<String> {
    let mut i = 0;
    while i < words.len()
        && (words[i].contains('=') && !words[i].starts_with('-')
            || ["exec", "env", "time", "nohup"].contains(&words[i]))
    {
        i += 1;
    }
    let Some(&first) = words.get(i) else {
        return vec![];
    };
    let shell = ["sh", "bash", "/bin/sh", "/bin/bash", "/usr/bin/env"].contains(&first);
    if !shell {
        return vec![first.to_string()];
    }
    let rest = &words[i + 1..];
    if let Some(c) = rest.iter().position(|w| *w == "-c") {
        return shell_programs(&rest[c + 1..].join(" "));
    }
    rest.iter()
        .find(|w| !w.starts_with('-'))
        .map(|w| vec![w.to_string()])
        .unwrap_or_default()
}

/// What an instruction or compose command runs: exec form (a JSON list) or shell form.
fn programs(args: &str) -> Vec<String> {
    let args = args.trim();
    if args.starts_with('[') {
        if let Ok(list) = serde_json::from_str::<Vec<String>>(args) {
            let words: Vec<&str> = list.iter().map(String::as_str).collect();
            return program_of(&words);
        }
    }
    let args = args.split_whitespace().skip_while(|w| w.starts_with("--"));
    shell_programs(&args.collect::<Vec<_>>().join(" "))
}

/// A program path as seen from `workdir` in the image, if it is in the repository (whose
/// image path is [`IN_IMAGE`]): its path relative to the repository root. Names looked up on
/// PATH (no `/`) are not scripts of ours.
fn in_repo(program: &str, workdir: &str) -> Option<String> {
    if !program.contains('/') {
        return None;
    }
    let full = if program.starts_with('/') {
        PathBuf::from(program)
    } else {
        Path::new(workdir).join(program)
    };
    let mut parts: Vec<&str> = Vec::new();
    for c in full.components() {
        match c {
            std::path::Component::Normal(s) => parts.push(s.to_str()?),
            std::path::Component::ParentDir => {
                parts.pop();
            }
            _ => {}
        }
    }
    let joined = format!("/{}", parts.join("/"));
    joined
        .strip_prefix(IN_IMAGE)?
        .strip_prefix('/')
        .map(String::from)
}

/// The repository scripts the container calls: (repo-relative path, where it is called).
/// A program outside the repository named by path (e.g. under /usr) is not ours and is
/// left out; a relative one that leaves the repository comes as `!PATH from WORKDIR`.
pub fn called_scripts(root: &Path) -> Result<Vec<(String, String)>> {
    let text = std::fs::read_to_string(root.join(DOCKERFILE))
        .with_context(|| format!("reading {DOCKERFILE}"))?;
    let mut workdir = "/".to_string();
    let mut out = Vec::new();
    let mut entrypoint = false;
    let mut found = |program: String, workdir: &str, at: String| {
        if let Some(rel) = in_repo(&program, workdir) {
            out.push((rel, at));
        } else if !program.starts_with('/') && program.contains('/') {
            // A relative path that leaves the repository: marked for `scripts` to report.
            out.push((format!("!{program} from {workdir}"), at));
        }
    };
    for (kw, args) in instructions(&text) {
        match kw.as_str() {
            "WORKDIR" => {
                workdir = Path::new(&workdir).join(&args).display().to_string();
            }
            "FROM" => {
                workdir = "/".into();
                entrypoint = false;
            }
            "ENTRYPOINT" => entrypoint = true,
            _ => {}
        }
        if kw == "RUN" || kw == "ENTRYPOINT" || (kw == "CMD" && !entrypoint) {
            for p in programs(&args) {
                found(p, &workdir, format!("{DOCKERFILE} {kw}"));
            }
        }
    }
    for (name, s) in services(&root.join(COMPOSE))? {
        let dir = s["working_dir"].as_str().unwrap_or(&workdir).to_string();
        for key in ["entrypoint", "command"] {
            if key == "command" && !s["entrypoint"].is_badvalue() {
                continue;
            }
            if let Some(w) = words(&s[key]) {
                let w: Vec<&str> = w.iter().map(String::as_str).collect();
                for p in program_of(&w) {
                    found(p, &dir, format!("{COMPOSE} service {name} {key}"));
                }
            }
        }
    }
    Ok(out)
}

/// Whether .dockerignore leaves `rel` out of the build context (exact paths and directories;
/// a pattern with wildcards or `!` is not interpreted and counts as not matching).
fn dockerignored(root: &Path, rel: &str) -> Option<String> {
    let text = std::fs::read_to_string(root.join(".dockerignore")).ok()?;
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('!'))
        .filter(|l| !l.contains(['*', '?', '[']))
        .map(|l| l.trim_start_matches("./").trim_matches('/'))
        .find(|p| rel == *p || rel.starts_with(&format!("{p}/")))
        .map(String::from)
}

/// How git tracks `rel`: Some(mode) when `root` is a git checkout, None when it is not (as in
/// the image, which has no .git).
fn git_mode(root: &Path, rel: &str) -> Option<Option<String>> {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
    };
    let top = git(&["rev-parse", "--show-toplevel"])?;
    let top = PathBuf::from(String::from_utf8_lossy(&top.stdout).trim());
    if top.canonicalize().ok()? != root.canonicalize().ok()? {
        return None; // a directory inside some other checkout (a test fixture)
    }
    let out = git(&["ls-files", "--stage", "--", rel])?;
    let line = String::from_utf8_lossy(&out.stdout).to_string();
    Some(line.split_whitespace().next().map(String::from))
}

/// Every script the container calls exists, is executable, is in git as executable, and is
/// in the build context; so are the files ci/test's own docker check reads in the image.
pub fn scripts(root: &Path) -> Result<String> {
    let called = called_scripts(root)?;
    let mut problems = Vec::new();
    for required in REQUIRED_SCRIPTS {
        if !called.iter().any(|(rel, _)| rel == required) {
            problems.push(format!("nothing in docker/ calls {required}"));
        }
    }
    let mut checked: Vec<&str> = Vec::new();
    for (rel, at) in &called {
        if checked.contains(&rel.as_str()) {
            continue;
        }
        checked.push(rel);
        if let Some(outside) = rel.strip_prefix('!') {
            problems.push(format!("{outside} (called in {at}) is outside {IN_IMAGE}"));
            continue;
        }
        let path = root.join(rel);
        match std::fs::metadata(&path) {
            Err(_) => problems.push(format!("{rel} (called in {at}) does not exist")),
            Ok(m) if !m.is_file() => problems.push(format!("{rel} (called in {at}) is not a file")),
            Ok(m) if m.permissions().mode() & 0o111 == 0 => {
                problems.push(format!("{rel} (called in {at}) is not executable"))
            }
            Ok(_) => match git_mode(root, rel) {
                Some(None) => problems.push(format!("{rel} (called in {at}) is not in git")),
                Some(Some(mode)) if mode != "100755" => problems.push(format!(
                    "{rel} (called in {at}) is in git as mode {mode}, not 100755: a clone \
                     would not run it (git update-index --chmod=+x {rel})"
                )),
                _ => {}
            },
        }
    }
    for rel in checked
        .iter()
        .filter(|r| !r.starts_with('!'))
        .copied()
        .chain([DOCKERFILE, COMPOSE])
    {
        if let Some(p) = dockerignored(root, rel) {
            problems.push(format!(
                ".dockerignore's {p:?} leaves {rel} out of the image"
            ));
        }
    }
    if !problems.is_empty() {
        bail!("{}", problems.join("; "));
    }
    Ok(format!("{} exist and are executable", checked.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD_COMPOSE: &str = "\
x-image: &image
  build:
    context: ..
    dockerfile: docker/Dockerfile
services:
  test:
    <<: *image
    command: [\"ci/test\"]
  bench:
    <<: *image
    command: ci/bench
    volumes:
      - ../bench-results:/rheap/target/bench
";
    const GOOD_DOCKERFILE: &str = "\
FROM debian:bookworm
WORKDIR /rheap
# a comment
COPY . .
RUN ci/setup && \\
    cargo build
CMD [\"ci/test\"]
";

    /// A repository in a temporary directory with these files (`+x` marks executables).
    fn repo(files: &[(&str, &str, bool)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (rel, text, exec) in files {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            let mode = if *exec { 0o755 } else { 0o644 };
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        dir
    }

    fn good_scripts() -> Vec<(&'static str, &'static str, bool)> {
        REQUIRED_SCRIPTS
            .iter()
            .map(|s| (*s, "#!/bin/sh\n", true))
            .collect()
    }

    #[test]
    fn instructions_join_continuations_and_drop_comments() {
        let got = instructions(GOOD_DOCKERFILE);
        let kws: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(kws, ["FROM", "WORKDIR", "COPY", "RUN", "CMD"]);
        assert_eq!(
            got[3].1.split_whitespace().collect::<Vec<_>>(),
            ["ci/setup", "&&", "cargo", "build"]
        );
    }

    #[test]
    fn programs_in_shell_and_exec_forms() {
        assert_eq!(programs("ci/setup && cargo build"), ["ci/setup", "cargo"]);
        assert_eq!(
            programs("--mount=type=cache,target=/x A=1 ./ci/x; bash -e ci/y arg"),
            ["./ci/x", "ci/y"]
        );
        assert_eq!(programs(r#"["ci/test", "--smoke"]"#), ["ci/test"]);
        assert_eq!(
            programs(r#"["/bin/bash", "-c", "ci/setup || exit 1"]"#),
            ["ci/setup", "exit"]
        );
        assert_eq!(in_repo("./ci/test", "/rheap").as_deref(), Some("ci/test"));
        assert_eq!(in_repo("/rheap/ci/bench", "/").as_deref(), Some("ci/bench"));
        assert_eq!(in_repo("ci/test", "/opt"), None);
        assert_eq!(in_repo("cargo", "/rheap"), None);
    }

    #[test]
    fn the_repositorys_docker_files_pass_every_check() {
        let checks = run(&rheap_harness::paths::workspace());
        let problems: Vec<String> = checks
            .iter()
            .filter_map(|c| c.problem.clone().map(|p| format!("{}: {p}", c.name)))
            .collect();
        assert!(problems.is_empty(), "{problems:#?}");
    }

    /// What `check` says of a file `name` holding `text`, which it must reject.
    fn rejection(check: fn(&Path) -> Result<String>, name: &str, text: &str) -> String {
        let dir = repo(&[(name, text, false)]);
        check(&dir.path().join(name)).unwrap_err().to_string()
    }

    #[test]
    fn hadolint_rejects_a_bad_dockerfile() {
        let e = rejection(
            hadolint,
            "Dockerfile",
            "FROM debian:latest\nRUN cd /x && make\n",
        );
        assert!(e.contains("DL3007") && e.contains("DL3003"), "{e}");
    }

    #[test]
    fn the_schema_rejects_a_broken_compose_file() {
        let bad_service = "services:\n  test:\n    biuld: ..\n    command: 5\n";
        let e = rejection(compose_schema, "compose.yaml", bad_service);
        assert!(e.contains("biuld"), "{e}");
        let e = rejection(compose_schema, "compose.yaml", "servics:\n  test: {}\n");
        assert!(e.contains("servics"), "{e}");
    }

    #[test]
    fn services_need_their_commands_build_and_volume() {
        let mut files = good_scripts();
        files.push((COMPOSE, GOOD_COMPOSE, false));
        let dir = repo(&files);
        compose_services(dir.path()).unwrap();

        let bad = GOOD_COMPOSE
            .replace("context: ..", "context: .")
            .replace("command: ci/bench", "command: ci/test")
            .replace("/rheap/target/bench", "/results");
        std::fs::write(dir.path().join(COMPOSE), bad).unwrap();
        let e = compose_services(dir.path()).unwrap_err().to_string();
        for want in ["build context", "does not run ci/bench", "mounts no volume"] {
            assert!(e.contains(want), "{want}: {e}");
        }
    }

    #[test]
    fn scripts_must_exist_be_executable_and_be_in_the_context() {
        let mut files = good_scripts();
        files.push((COMPOSE, GOOD_COMPOSE, false));
        files.push((DOCKERFILE, GOOD_DOCKERFILE, false));
        let dir = repo(&files);
        let ok = scripts(dir.path()).unwrap();
        assert_eq!(ok, "ci/setup, ci/test, ci/bench exist and are executable");

        // ci/setup loses its x bit, the Dockerfile calls a missing script, .dockerignore drops ci/.
        let setup = dir.path().join("ci/setup");
        std::fs::set_permissions(&setup, std::fs::Permissions::from_mode(0o644)).unwrap();
        let df = GOOD_DOCKERFILE.replace("cargo build", "ci/missing --x");
        std::fs::write(dir.path().join(DOCKERFILE), df).unwrap();
        std::fs::write(dir.path().join(".dockerignore"), "target\n/ci/\n").unwrap();
        let e = scripts(dir.path()).unwrap_err().to_string();
        for want in [
            "ci/setup (called in docker/Dockerfile RUN) is not executable",
            "ci/missing (called in docker/Dockerfile RUN) does not exist",
            ".dockerignore's \"ci\" leaves ci/test out of the image",
        ] {
            assert!(e.contains(want), "{want}: {e}");
        }

        // A compose command that leaves the repository, and no one calling ci/bench.
        let compose = GOOD_COMPOSE.replace("command: ci/bench", "command: ../elsewhere/run");
        std::fs::write(dir.path().join(COMPOSE), compose).unwrap();
        let e = scripts(dir.path()).unwrap_err().to_string();
        assert!(e.contains("nothing in docker/ calls ci/bench"), "{e}");
        let want = "../elsewhere/run from /rheap (called in docker/compose.yaml service bench \
                    command) is outside /rheap";
        assert!(e.contains(want), "{e}");
    }
}
