//! `cargo xtask cycles`: no crate of the workspace may have an import cycle between its
//! modules.
//!
//! A module is a file (`lib.rs`, `main.rs` and `mod.rs` as usual; an inline `mod x { ... }`
//! belongs to its file). Every crate target under a package's `src/` (its library and
//! binaries) is read from its root along its `mod x;` declarations, and an edge goes from a file
//! to another when its code names something of the other:
//! - `crate::a::b::Item`, `self::...`, `super::...` paths (in `use` declarations, in code and
//!   in macro arguments), resolved to the deepest module they name; so `super::sibling::X` is an
//!   edge to the sibling, and `super::X` one to the parent's own file (an item of it);
//! - a path starting with a child module's name (`child::f()`), or with a name a `use` bound to
//!   a module or an item (`use crate::fuzz; fuzz::rng::Rng`);
//! - a name that a file only re-exports (`pub use server::Server;` in `lib.rs`) leads to the
//!   module it comes from, not to the re-exporting file.
//!
//! A `mod x;` declaration alone is no edge (every parent declares its children), and neither is
//! anything under `#[cfg(test)]` (a file's own test module's `use super::*`). A cycle is a
//! strongly connected component of two files or more.

use anyhow::{bail, Context, Result};
use proc_macro2::{TokenStream, TokenTree};
use rheap_harness::process::output;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// Checks the workspace at `root`; prints the cycles, or that there are none. Returns whether
/// there are none.
pub fn run(root: &Path) -> Result<bool> {
    let crates = workspace_crates(root)?;
    let packages = crates
        .iter()
        .map(|c| c.package.as_str())
        .collect::<BTreeSet<_>>()
        .len();
    let graph = Graph::read(&crates)?;
    let cycles = graph.cycles();
    for u in &graph.unreadable {
        println!("cannot parse {u} (its imports are not checked)");
    }
    if cycles.is_empty() && graph.unreadable.is_empty() {
        println!(
            "no import cycles in {} modules of {packages} crates",
            graph.files.len()
        );
        return Ok(true);
    }
    for scc in &cycles {
        let first = &graph.files[scc[0]];
        println!("{}: import cycle among {} modules:", first.krate, scc.len());
        for &a in scc {
            for (&b, why) in &graph.edges[a] {
                if scc.contains(&b) {
                    println!(
                        "  {} -> {}  ({why})",
                        graph.show(a, root),
                        graph.show(b, root)
                    );
                }
            }
        }
    }
    println!(
        "{} import cycle(s) in {} modules of {packages} crates{}",
        cycles.len(),
        graph.files.len(),
        match graph.unreadable.len() {
            0 => String::new(),
            n => format!(", {n} file(s) not parsed"),
        }
    );
    Ok(false)
}

/// A crate to read: the package's name, the target's name and its root file.
#[derive(Debug, Clone)]
pub struct Crate {
    pub package: String,
    pub name: String,
    pub root: PathBuf,
}

/// The workspace members' library and binary targets under their `src/`
/// (`cargo metadata --no-deps`).
fn workspace_crates(root: &Path) -> Result<Vec<Crate>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = output(
        std::process::Command::new(cargo)
            .args(["metadata", "--no-deps", "--format-version", "1"])
            .current_dir(root),
    )?;
    let meta: serde_json::Value = serde_json::from_str(&out)?;
    let mut crates = Vec::new();
    for p in meta["packages"].as_array().into_iter().flatten() {
        let package = p["name"].as_str().unwrap_or_default().to_string();
        let manifest = PathBuf::from(p["manifest_path"].as_str().unwrap_or_default());
        let src = manifest.parent().unwrap_or(Path::new("")).join("src");
        for t in p["targets"].as_array().into_iter().flatten() {
            let kinds: Vec<&str> = t["kind"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|k| k.as_str())
                .collect();
            let code = kinds.iter().any(|k| {
                matches!(
                    *k,
                    "lib" | "rlib" | "cdylib" | "dylib" | "staticlib" | "bin"
                )
            });
            let path = PathBuf::from(t["src_path"].as_str().unwrap_or_default());
            if code && path.starts_with(&src) {
                crates.push(Crate {
                    package: package.clone(),
                    name: t["name"].as_str().unwrap_or_default().to_string(),
                    root: path,
                });
            }
        }
    }
    Ok(crates)
}

/// A file of a crate.
#[derive(Debug)]
pub struct File {
    pub krate: String,
    pub path: PathBuf,
}

/// Files and the edges between them, with an example of what made each edge.
#[derive(Debug, Default)]
pub struct Graph {
    pub files: Vec<File>,
    pub edges: Vec<BTreeMap<usize, String>>,
    /// Files that do not parse (each with where and why): the check fails.
    pub unreadable: Vec<String>,
}

/// A module of one crate: its file, its children and the names its `use` declarations bind.
#[derive(Debug, Default)]
struct Module {
    file: usize,
    /// What a name bound by `use` stands for: the path as written, and the module it was
    /// written in.
    uses: HashMap<String, (Vec<String>, Vec<String>)>,
    /// Paths named in the module's code and `use` declarations, as written.
    named: Vec<Vec<String>>,
}

impl Graph {
    /// Reads every crate in `crates` from its root.
    pub fn read(crates: &[Crate]) -> Result<Graph> {
        let mut g = Graph::default();
        for c in crates {
            let mut modules: BTreeMap<Vec<String>, Module> = BTreeMap::new();
            g.load(c, &c.root, vec![], &mut modules)?;
            for (at, m) in &modules {
                for path in &m.named {
                    if let Some(to) = resolve(&modules, at, path, 0) {
                        let to = modules[&to].file;
                        if to != m.file {
                            g.edges[m.file].entry(to).or_insert_with(|| path.join("::"));
                        }
                    }
                }
            }
        }
        Ok(g)
    }

    /// Reads the file `path`, module `at` of crate `c`, and the files it declares.
    fn load(
        &mut self,
        c: &Crate,
        path: &Path,
        at: Vec<String>,
        modules: &mut BTreeMap<Vec<String>, Module>,
    ) -> Result<()> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let id = self.files.len();
        self.files.push(File {
            krate: c.name.clone(),
            path: path.to_path_buf(),
        });
        self.edges.push(BTreeMap::new());
        let file = match syn::parse_file(&text) {
            Ok(file) => file,
            Err(e) => {
                // Counted as a module without edges, and reported: the check fails.
                let pos = e.span().start();
                self.unreadable.push(format!(
                    "{}:{}:{}: {e}",
                    path.display(),
                    pos.line,
                    pos.column + 1
                ));
                modules.insert(
                    at,
                    Module {
                        file: id,
                        ..Module::default()
                    },
                );
                return Ok(());
            }
        };
        // Where this file's `mod x;` files are: beside it for lib.rs, main.rs, mod.rs and a
        // crate root, else in a directory named after it.
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let dir = path.parent().unwrap_or(Path::new(""));
        let children_dir = if at.is_empty() || stem == "mod" {
            dir.to_path_buf()
        } else {
            dir.join(stem)
        };
        self.items(c, &file.items, id, &children_dir, at, modules)
    }

    fn items(
        &mut self,
        c: &Crate,
        items: &[syn::Item],
        file: usize,
        children_dir: &Path,
        at: Vec<String>,
        modules: &mut BTreeMap<Vec<String>, Module>,
    ) -> Result<()> {
        let mut names = Names::default();
        for item in items {
            if is_test(item_attrs(item)) {
                continue;
            }
            match item {
                syn::Item::Mod(m) => {
                    let mut child = at.clone();
                    child.push(m.ident.to_string());
                    let dir = children_dir.join(m.ident.to_string());
                    match &m.content {
                        Some((_, inner)) => self.items(c, inner, file, &dir, child, modules)?,
                        None => {
                            let explicit = path_attr(&m.attrs).map(|p| children_dir.join(p));
                            let candidates = explicit.into_iter().chain([
                                children_dir.join(format!("{}.rs", m.ident)),
                                dir.join("mod.rs"),
                            ]);
                            let Some(found) = candidates.into_iter().find(|p| p.is_file()) else {
                                bail!(
                                    "{}: no file for `mod {}`",
                                    self.files[file].path.display(),
                                    m.ident
                                );
                            };
                            self.load(c, &found, child, modules)?;
                        }
                    }
                }
                other => names.visit_item(other),
            }
        }
        let mut uses = HashMap::new();
        for (name, path) in names.bound {
            uses.insert(name, (path, at.clone()));
        }
        modules.insert(
            at,
            Module {
                file,
                uses,
                named: names.named,
            },
        );
        Ok(())
    }

    /// A file's path relative to `root`, for printing.
    fn show(&self, i: usize, root: &Path) -> String {
        let p = &self.files[i].path;
        p.strip_prefix(root).unwrap_or(p).display().to_string()
    }

    /// The strongly connected components of two files or more, each sorted, in the order of
    /// their first file.
    pub fn cycles(&self) -> Vec<Vec<usize>> {
        let edges: Vec<Vec<usize>> = self
            .edges
            .iter()
            .map(|e| e.keys().copied().collect())
            .collect();
        components(&edges)
    }
}

/// The strongly connected components of two nodes or more of the graph `edges` (node `i` has
/// an edge to each of `edges[i]`), by Tarjan's algorithm; each sorted, sorted by first node.
pub fn components(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        edges: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for i in 0..s.edges[v].len() {
            let w = s.edges[v][i];
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut scc = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                scc.push(w);
                if w == v {
                    break;
                }
            }
            if scc.len() > 1 {
                scc.sort_unstable();
                s.out.push(scc);
            }
        }
    }
    let n = edges.len();
    let mut s = State {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

/// The module `path` (written in module `at`) names: the deepest module along it, or None when
/// it names nothing of this crate (another crate, std, a local item).
fn resolve(
    modules: &BTreeMap<Vec<String>, Module>,
    at: &[String],
    path: &[String],
    depth: usize,
) -> Option<Vec<String>> {
    if depth > 8 || path.is_empty() {
        return None;
    }
    let (mut base, mut rest): (Vec<String>, &[String]) = match path[0].as_str() {
        "crate" => (vec![], &path[1..]),
        "self" => (at.to_vec(), &path[1..]),
        "super" => {
            let mut base = at.to_vec();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                base.pop()?;
                rest = &rest[1..];
            }
            (base, rest)
        }
        first => {
            let mut child = at.to_vec();
            child.push(first.to_string());
            if modules.contains_key(&child) {
                (at.to_vec(), path)
            } else if let Some((bound, written_in)) = modules.get(at)?.uses.get(first) {
                let mut full = bound.clone();
                full.extend_from_slice(&path[1..]);
                return resolve(modules, written_in, &full, depth + 1);
            } else {
                return None;
            }
        }
    };
    while let Some((seg, tail)) = rest.split_first() {
        let mut next = base.clone();
        next.push(seg.clone());
        if modules.contains_key(&next) {
            base = next;
            rest = tail;
            continue;
        }
        // An item of `base`: where it comes from if `base` only imports it.
        if let Some((bound, written_in)) = modules.get(&base)?.uses.get(seg) {
            let mut full = bound.clone();
            full.extend_from_slice(tail);
            if let Some(m) = resolve(modules, written_in, &full, depth + 1) {
                return Some(m);
            }
        }
        break;
    }
    Some(base)
}

/// What a module's items name: paths in code, and what its `use` declarations bind.
#[derive(Default)]
struct Names {
    named: Vec<Vec<String>>,
    bound: Vec<(String, Vec<String>)>,
}

impl Names {
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut full = prefix.clone();
                if n.ident != "self" {
                    full.push(n.ident.to_string());
                }
                if let Some(last) = full.last().cloned() {
                    self.bound.push((last, full.clone()));
                }
                self.named.push(full);
            }
            syn::UseTree::Rename(r) => {
                let mut full = prefix.clone();
                if r.ident != "self" {
                    full.push(r.ident.to_string());
                }
                self.bound.push((r.rename.to_string(), full.clone()));
                self.named.push(full);
            }
            syn::UseTree::Glob(_) => self.named.push(prefix.clone()),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }

    /// `a::b::c` sequences in a macro's tokens (they are not parsed as paths).
    fn tokens(&mut self, tokens: TokenStream) {
        let mut current: Vec<String> = Vec::new();
        let mut colons = 0;
        let flush = |current: &mut Vec<String>, named: &mut Vec<Vec<String>>| {
            if current.len() > 1 {
                named.push(std::mem::take(current));
            }
            current.clear();
        };
        for t in tokens {
            match t {
                TokenTree::Ident(i) => {
                    if colons != 2 {
                        flush(&mut current, &mut self.named);
                    }
                    current.push(i.to_string());
                    colons = 0;
                }
                TokenTree::Punct(p) if p.as_char() == ':' && !current.is_empty() => {
                    colons += 1;
                }
                TokenTree::Group(g) => {
                    flush(&mut current, &mut self.named);
                    colons = 0;
                    self.tokens(g.stream());
                }
                _ => {
                    flush(&mut current, &mut self.named);
                    colons = 0;
                }
            }
        }
        flush(&mut current, &mut self.named);
    }
}

impl<'ast> Visit<'ast> for Names {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if !is_test(&u.attrs) {
            self.use_tree(&mut Vec::new(), &u.tree);
        }
    }

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {
        // A module inside a function body: rare; not followed.
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test(&f.attrs) {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if !segments.is_empty() {
            self.named.push(segments);
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.visit_path(&m.path);
        self.tokens(m.tokens.clone());
    }
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item::*;
    match item {
        Const(i) => &i.attrs,
        Enum(i) => &i.attrs,
        ExternCrate(i) => &i.attrs,
        Fn(i) => &i.attrs,
        ForeignMod(i) => &i.attrs,
        Impl(i) => &i.attrs,
        Macro(i) => &i.attrs,
        Mod(i) => &i.attrs,
        Static(i) => &i.attrs,
        Struct(i) => &i.attrs,
        Trait(i) => &i.attrs,
        TraitAlias(i) => &i.attrs,
        Type(i) => &i.attrs,
        Union(i) => &i.attrs,
        Use(i) => &i.attrs,
        _ => &[],
    }
}

/// Whether `attrs` have `#[cfg(test)]` (or `#[cfg(all(test, ...))]`).
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta.require_list().is_ok_and(|l| {
                let t = l.tokens.to_string();
                t == "test" || t.starts_with("all (test") || t.starts_with("all(test")
            })
    })
}

/// A `#[path = "..."]` attribute's value.
fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| {
        let nv = a.meta.require_name_value().ok()?;
        if !a.path().is_ident("path") {
            return None;
        }
        match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_graph_without_a_cycle_has_no_component() {
        // 0 -> 1 -> 2, 0 -> 2, 3 alone.
        let edges = vec![vec![1, 2], vec![2], vec![], vec![]];
        assert!(components(&edges).is_empty());
    }

    #[test]
    fn a_cycle_is_one_component() {
        // 0 -> 1 -> 2 -> 0, 2 -> 3 -> 4 -> 3, 5 -> 0.
        let edges = vec![vec![1], vec![2], vec![0, 3], vec![4], vec![3], vec![0]];
        assert_eq!(components(&edges), vec![vec![0, 1, 2], vec![3, 4]]);
    }

    /// A crate written into a temporary directory: (path under src/, text).
    fn graph_of(files: &[(&str, &str)]) -> (Graph, Vec<Vec<String>>) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join("src").join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let g = Graph::read(&[Crate {
            package: "demo".into(),
            name: "demo".into(),
            root: dir.path().join("src/lib.rs"),
        }])
        .unwrap();
        let name = |i: usize| {
            g.files[i]
                .path
                .strip_prefix(dir.path().join("src"))
                .unwrap()
                .display()
                .to_string()
        };
        let cycles = g
            .cycles()
            .iter()
            .map(|c| c.iter().map(|&i| name(i)).collect())
            .collect();
        (g, cycles)
    }

    #[test]
    fn siblings_naming_each_other_are_a_cycle() {
        let (_, cycles) = graph_of(&[
            ("lib.rs", "mod a; mod b; mod c;\npub use a::A;\n"),
            ("a.rs", "use crate::b::B;\npub struct A(B);\n"),
            // Through the re-export in lib.rs, and through super::.
            (
                "b.rs",
                "pub struct B;\nfn f() -> super::A { crate::A(B) }\n",
            ),
            // c names lib.rs's re-export of a only: no cycle with lib.rs.
            ("c.rs", "fn g() -> Option<crate::A> { None }\n"),
        ]);
        assert_eq!(cycles, vec![vec!["a.rs".to_string(), "b.rs".to_string()]]);
    }

    #[test]
    fn declarations_tests_and_a_tree_are_no_cycle() {
        let (g, cycles) = graph_of(&[
            ("lib.rs", "pub mod p;\npub mod q;\n"),
            (
                "p/mod.rs",
                "pub mod child;\npub mod other;\npub fn run() { child::go(); }\n\
                 #[cfg(test)]\nmod tests { use super::*; use crate::q::Q; }\n",
            ),
            ("p/child.rs", "use super::other::Other;\npub fn go() {}\n"),
            ("p/other.rs", "pub struct Other;\n"),
            (
                "q.rs",
                "pub struct Q;\n#[cfg(test)]\nmod tests { use crate::p::run; }\n",
            ),
        ]);
        assert!(cycles.is_empty(), "{cycles:?}");
        // p -> child -> other; the test modules add nothing.
        let edges: usize = g.edges.iter().map(|e| e.len()).sum();
        assert_eq!(edges, 2, "{:?}", g.edges);
    }

    #[test]
    fn a_child_using_an_item_of_its_parent_that_uses_it_is_a_cycle() {
        let (_, cycles) = graph_of(&[
            ("lib.rs", "mod p;\n"),
            (
                "p.rs",
                "mod child;\npub const N: u32 = 1;\nfn f() { child::go(); }\n",
            ),
            ("p/child.rs", "pub fn go() { let _ = super::N; }\n"),
        ]);
        assert_eq!(
            cycles,
            vec![vec!["p.rs".to_string(), "p/child.rs".to_string()]]
        );
    }

    #[test]
    fn paths_in_macros_and_through_a_used_module_count() {
        let (_, cycles) = graph_of(&[
            ("lib.rs", "mod a; mod b;\n"),
            ("a.rs", "use crate::b;\npub fn f() { b::g(); }\n"),
            ("b.rs", "pub fn g() { println!(\"{}\", crate::a::N); }\n"),
        ]);
        assert_eq!(cycles, vec![vec!["a.rs".to_string(), "b.rs".to_string()]]);
    }
}
