//! The module graph has layers, and imports only run down them.
//!
//! Read from the sources, as a newcomer would: every `crate::MODULE` a
//! library file names in its code (comments and doc links left out) is an
//! import of that top-level module. Each module has its place in [`LAYERS`];
//! an import may go to its own layer or one below, never up, and the
//! imports never make a cycle. A new module must be given its place here.
//! In the binary, the subcommands (`src/bin/yaraus/commands/`) never import
//! each other: what two of them share belongs below them (the binary's
//! `stdout.rs`, the library).
//!
//! One home per concept: every named `Duration` of the library (a pause, a
//! lifetime, a bound, an interval) is a timing rule, and lives in
//! `src/timing/`, whose every constant the README's table of timing rules
//! names. And the library reads no test knob from the environment.
//!
//! `maps.rs`: the README's code layout and the crate docs list the layers
//! as [`LAYERS`] has them, and every `src/` path a comment or a doc cites
//! exists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod maps;

/// The library's top-level modules, from the bottom up (see README, "How
/// the code is laid out").
const LAYERS: &[(&str, &[&str])] = &[
    ("errors", &["error"]),
    ("bottom", &["base"]),
    ("timing", &["timing"]),
    ("metrics", &["metrics"]),
    ("store", &["store"]),
    ("claims", &["claim", "supervise"]),
    ("domain", &["seq", "lock", "lease", "hilo", "index", "acl"]),
    ("context", &["context"]),
    ("report", &["health"]),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

/// The library's sources (outside `src/bin/`): each path relative to
/// `src/`, and the file's path.
fn library_files() -> Vec<(PathBuf, PathBuf)> {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .into_iter()
        .map(|f| (f.strip_prefix(&src).unwrap().to_path_buf(), f))
        .filter(|(rel, _)| !rel.starts_with("bin"))
        .collect()
}

/// The code of a Rust source, comments (and so doc links) removed.
fn code(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names that follow `prefix` in `text`, as far as they are identifiers.
fn names_after<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.match_indices(prefix)
        .map(|(i, _)| {
            let rest = &text[i + prefix.len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .filter(|n| !n.is_empty())
        .collect()
}

/// Top-level module → the top-level modules its files name.
fn library_imports() -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, file) in library_files() {
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        if first == "lib.rs" {
            continue;
        }
        let module = first.trim_end_matches(".rs").to_string();
        let named = graph.entry(module.clone()).or_default();
        for name in names_after(&code(&file), "crate::") {
            if name != module {
                named.insert(name.to_string());
            }
        }
    }
    graph
}

fn layer_of(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
        .unwrap_or_else(|| panic!("the module {module} has no place in LAYERS (tests/layers.rs)"))
}

/// A cycle of `graph`, if it has one.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|n| n == node) {
            return Some(path[i..].to_vec());
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn library_imports_run_down_the_layers_and_make_no_cycle() {
    let graph = library_imports();
    let mut upward = Vec::new();
    for (module, named) in &graph {
        for other in named {
            if layer_of(other) > layer_of(module) {
                upward.push(format!("{module} -> {other}"));
            }
        }
    }
    let edges: usize = graph.values().map(BTreeSet::len).sum();
    eprintln!("{} modules, {edges} imports between them", graph.len());
    assert!(upward.is_empty(), "imports that run up a layer: {upward:?}");
    assert_eq!(cycle(&graph), None, "a cycle of imports");
}

#[test]
fn subcommands_of_the_binary_do_not_import_each_other() {
    let dir = root().join("src/bin/yaraus/commands");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    // A subcommand is a file of commands/ or a folder of it; the files of
    // a folder are one subcommand and may import each other.
    let subcommand = |file: &Path| -> String {
        let inner = file.strip_prefix(&dir).unwrap();
        let first = inner.components().next().unwrap().as_os_str();
        first.to_string_lossy().trim_end_matches(".rs").to_string()
    };
    let subcommands: BTreeSet<String> = files
        .iter()
        .map(|f| subcommand(f))
        .filter(|s| s != "mod")
        .collect();
    let mut crossing = Vec::new();
    for file in &files {
        let me = subcommand(file);
        let depth = file.strip_prefix(&dir).unwrap().components().count();
        // `super::` from commands/x.rs and commands/x/mod.rs is commands/;
        // from commands/x/y.rs it is commands/x/, and `super::super::` is.
        let up = if depth == 1 || file.ends_with("mod.rs") {
            "super::"
        } else {
            "super::super::"
        };
        for name in names_after(&code(file), up) {
            if subcommands.contains(name) && name != me && me != "mod" {
                crossing.push(format!("{me} -> {name}"));
            }
        }
    }
    assert!(
        crossing.is_empty(),
        "subcommands importing each other: {crossing:?}"
    );
}

/// The constants `code` defines (`const NAME: TYPE = …`), with their types.
fn constants(code: &str) -> Vec<(&str, &str)> {
    code.match_indices("const ")
        .filter(|(i, _)| code[..*i].chars().last().is_none_or(|c| c.is_whitespace()))
        .filter_map(|(i, _)| {
            let rest = &code[i + "const ".len()..];
            let (name, rest) = rest.split_once(':')?;
            let (ty, _) = rest.split_once('=')?;
            let name = name.trim();
            let is_name = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
            is_name.then_some((name, ty.trim()))
        })
        .collect()
}

/// The names of the constants of `code` whose type holds a `Duration`.
fn duration_constants(code: &str) -> Vec<&str> {
    constants(code)
        .into_iter()
        .filter(|(_, ty)| ty.contains("Duration"))
        .map(|(name, _)| name)
        .collect()
}

#[test]
fn every_named_duration_of_the_library_lives_in_timing() {
    let mut outside = Vec::new();
    for (rel, file) in library_files() {
        if rel.starts_with("timing") {
            continue;
        }
        for name in duration_constants(&code(&file)) {
            outside.push(format!("{}: {name}", rel.display()));
        }
    }
    assert!(
        outside.is_empty(),
        "Duration constants outside src/timing/ (each timing rule lives there, with its \
         why, and in the README's table): {outside:?}"
    );
}

#[test]
fn the_readme_table_names_every_timing_constant() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut files = Vec::new();
    rust_files(&root().join("src/timing"), &mut files);
    let mut missing = Vec::new();
    let mut named = 0;
    for file in files {
        let module = file.file_stem().unwrap().to_string_lossy().into_owned();
        for (name, _) in constants(&code(&file)) {
            named += 1;
            let path = format!("{module}::{name}");
            if !readme.contains(&format!("`{path}`")) {
                missing.push(path);
            }
        }
    }
    eprintln!("{named} timing constants");
    assert!(
        missing.is_empty(),
        "timing constants missing from the README's table of timing rules: {missing:?}"
    );
}

#[test]
fn the_library_reads_no_test_knob_from_the_environment() {
    // What a test or a benchmark sets is an option of the library's types,
    // which the binary fills from hidden flags: an embedding program's
    // environment changes nothing.
    let knobs: Vec<_> = library_files()
        .into_iter()
        .filter(|(_, file)| {
            std::fs::read_to_string(file)
                .unwrap()
                .contains("YARAUS_TEST_")
        })
        .map(|(rel, _)| rel.display().to_string())
        .collect();
    assert!(
        knobs.is_empty(),
        "the library names YARAUS_TEST_ variables in {knobs:?}"
    );
}

#[test]
fn the_checks_can_fail() {
    assert_eq!(
        duration_constants(
            "const A: Duration = x;\n pub const N: usize = 3;\n\
             pub(crate) const P: (Duration, Duration) = (a, b);\nlet constant: Duration = y;"
        ),
        ["A", "P"]
    );
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    graph.entry("lock".into()).or_default().insert("seq".into());
    assert_eq!(cycle(&graph), None);
    graph.entry("seq".into()).or_default().insert("lock".into());
    assert_eq!(cycle(&graph), Some(vec!["lock".into(), "seq".into()]));
    assert!(layer_of("store") > layer_of("timing"));
    assert_eq!(
        names_after("use crate::store::{Quorum}; crate::info!(x)", "crate::"),
        ["store", "info"]
    );
}

/// Every folder of src/ with more than one file, relative to src/.
fn source_folders() -> Vec<String> {
    fn walk(dir: &Path, src: &Path, into: &mut Vec<String>) {
        let mut files = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, src, into);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files += 1;
            }
        }
        if files > 1 && dir != src {
            into.push(
                dir.strip_prefix(src)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    }
    let src = root().join("src");
    let mut folders = Vec::new();
    walk(&src, &src, &mut folders);
    folders.sort();
    folders
}

/// The names a `super::` path brings in: one, or each of a `{…}` group.
fn imported_names(after: &str) -> Vec<&str> {
    let ident = |s: &str| s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
    let Some(group) = after.strip_prefix('{') else {
        let end = ident(after).unwrap_or(after.len());
        return vec![&after[..end]];
    };
    let mut names = Vec::new();
    let (mut depth, mut start) = (0, Some(0));
    for (i, c) in group.char_indices() {
        if let Some(at) = start.take() {
            let rest = group[at..].trim_start();
            let end = ident(rest).unwrap_or(rest.len());
            names.push(&rest[..end]);
        }
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => start = Some(i + 1),
            _ => {}
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

/// File → the files of its folder it imports (`mod` for `mod.rs`), test
/// modules left out. A sub-folder module (`sub/mod.rs`) is a sibling too:
/// a file that names `super::sub::…` imports it, not `mod.rs` (its own
/// files are the sub-folder's check).
fn folder_imports(dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let files: Vec<PathBuf> = entries
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .filter(|p| !p.to_string_lossy().ends_with("_tests.rs"))
        .cloned()
        .collect();
    let stem = |p: &PathBuf| p.file_stem().unwrap().to_string_lossy().into_owned();
    let siblings: BTreeSet<String> = files.iter().map(stem).filter(|s| s != "mod").collect();
    let sub_folders: BTreeSet<String> = entries
        .iter()
        .filter(|p| p.join("mod.rs").is_file())
        .map(stem)
        .collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let me = stem(file);
        let text = code(file);
        let text = text.split("#[cfg(test)]\nmod ").next().unwrap();
        let mut named = BTreeSet::new();
        if me == "mod" {
            for sibling in &siblings {
                let path = format!("{sibling}::");
                let used = text.match_indices(&path).any(|(i, _)| {
                    let before = text[..i].chars().next_back().unwrap_or(' ');
                    !(before.is_ascii_alphanumeric() || before == '_' || before == ':')
                });
                if used {
                    named.insert(sibling.clone());
                }
            }
        } else {
            for (i, _) in text.match_indices("super::") {
                for name in imported_names(&text[i + "super::".len()..]) {
                    let sibling = siblings.contains(name) || sub_folders.contains(name);
                    let target = if sibling { name } else { "mod" };
                    if target != me && name != "super" {
                        named.insert(target.to_string());
                    }
                }
            }
        }
        graph.insert(me, named);
    }
    graph
}

#[test]
fn a_sub_folder_module_is_a_sibling_not_mod_rs() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("mod.rs", "mod a;\nmod sub;\npub use a::A;\n");
    write("a.rs", "use super::sub::run;\nuse super::Shared;\n");
    write("sub/mod.rs", "pub fn run() {}\n");
    let graph = folder_imports(dir.path());
    assert_eq!(graph["a"], BTreeSet::from(["mod".into(), "sub".into()]));
    assert_eq!(graph["mod"], BTreeSet::from(["a".into()]));
}

/// Every folder of src/ makes no cycle of imports among its files,
/// `mod.rs` included (a file that names an item of `mod.rs` imports it, and
/// `mod.rs` imports the files whose items it names): `mod.rs` declares,
/// documents and re-exports, and the files import their siblings directly.
#[test]
fn the_files_of_a_folder_make_no_cycle() {
    let folders = source_folders();
    assert!(folders.len() > 10, "{folders:?}");
    for folder in &folders {
        let graph = folder_imports(&root().join("src").join(folder));
        assert_eq!(cycle(&graph), None, "a cycle of imports in src/{folder}");
    }
}
