//! The maps of the code stay true: the README's code layout and the crate
//! docs list the layers as [`LAYERS`] has them, and every `src/` path a
//! comment or a doc cites exists.

use super::{LAYERS, root, rust_files};
use std::collections::BTreeSet;

/// The top-level library module a path under `src/` names (`bin` for the
/// binary's).
fn module_of(path: &str) -> Option<String> {
    let rest = path.strip_prefix("src/")?;
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    Some(rest[..end].to_string())
}

/// The layers the README's code layout lists, from the top: each row's
/// label and the modules of the `src/` paths that open its lines (the
/// binary's row left out).
fn readme_layers(readme: &str) -> Vec<(String, BTreeSet<String>)> {
    let section = readme
        .split("## How the code is laid out")
        .nth(1)
        .expect("the README's section \"How the code is laid out\"");
    let block = section
        .split("```text")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    let mut rows: Vec<(String, BTreeSet<String>)> = Vec::new();
    let mut open = false;
    for line in block.lines() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() {
            continue;
        }
        if trimmed.len() == line.len() {
            let (label, rest) = line.split_once(' ').unwrap_or((line, ""));
            let module = module_of(rest.trim_start());
            open = module.is_some();
            if let Some(module) = module {
                rows.push((label.to_string(), BTreeSet::from([module])));
            }
        } else if open && let Some(module) = module_of(trimmed) {
            rows.last_mut().unwrap().1.insert(module);
        }
    }
    rows.retain(|(_, modules)| !modules.contains("bin"));
    rows
}

/// The layers the crate docs (`src/lib.rs`) list, from the top: each
/// `* LABEL — …` line's label and the modules it links (``[`name`]``).
fn crate_doc_layers(lib: &str) -> Vec<(String, BTreeSet<String>)> {
    let mut rows: Vec<(String, BTreeSet<String>)> = Vec::new();
    for line in lib.lines().map_while(|l| l.strip_prefix("//!")) {
        let line = line.trim_start();
        if let Some((label, rest)) = line.strip_prefix("* ").and_then(|l| l.split_once(" — ")) {
            rows.push((label.to_string(), BTreeSet::new()));
            if let Some(row) = rows.last_mut() {
                row.1.extend(linked_modules(rest));
            }
        } else if !line.starts_with('*')
            && let Some(row) = rows.last_mut()
            && !line.is_empty()
        {
            row.1.extend(linked_modules(line));
        } else if line.is_empty() && !rows.is_empty() {
            break;
        }
    }
    rows
}

/// The names of the ``[`name`]`` links of `text` that name a module (no
/// `::` path).
fn linked_modules(text: &str) -> Vec<String> {
    text.split("[`")
        .skip(1)
        .filter_map(|s| s.split_once("`]").map(|(name, _)| name))
        .filter(|name| !name.contains("::"))
        .map(str::to_string)
        .collect()
}

fn layers_from_the_top() -> Vec<(String, BTreeSet<String>)> {
    LAYERS
        .iter()
        .rev()
        .map(|(label, modules)| {
            let modules = modules.iter().map(|m| m.to_string()).collect();
            (label.to_string(), modules)
        })
        .collect()
}

#[test]
fn the_readme_and_the_crate_docs_list_the_layers_as_they_are() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    assert_eq!(readme_layers(&readme), layers_from_the_top(), "README");
    assert_eq!(crate_doc_layers(&lib), layers_from_the_top(), "src/lib.rs");
}

/// The paths under `src/` that `text` cites: Rust and Lua sources.
fn cited_source_paths(text: &str) -> Vec<&str> {
    text.match_indices("src/")
        .filter(|(i, _)| {
            let before = text[..*i].chars().next_back().unwrap_or(' ');
            !(before.is_ascii_alphanumeric() || before == '_' || before == '/')
        })
        .filter_map(|(i, _)| {
            let rest = &text[i..];
            let end = rest
                .find(|c: char| {
                    !(c.is_ascii_lowercase() || c.is_ascii_digit() || "_/.".contains(c))
                })
                .unwrap_or(rest.len());
            let path = rest[..end].trim_end_matches('.');
            (path.ends_with(".rs") || path.ends_with(".lua")).then_some(path)
        })
        .collect()
}

#[test]
fn every_source_path_a_comment_or_a_doc_cites_exists() {
    // docs/benchmarks.md and CHANGELOG.md keep their history, paths of the
    // time included.
    let mut texts = vec![root().join("README.md"), root().join("Cargo.toml")];
    for dir in ["src", "tests", "benches", "docs"] {
        let mut files = Vec::new();
        rust_files(&root().join(dir), &mut files);
        texts.extend(files);
    }
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        let history = path.ends_with("benchmarks.md");
        if path.extension().is_some_and(|e| e == "md") && !history {
            texts.push(path);
        }
    }
    let mut missing = Vec::new();
    for file in &texts {
        let text = std::fs::read_to_string(file).unwrap();
        for path in cited_source_paths(&text) {
            if !root().join(path).exists() {
                missing.push(format!("{}: {path}", file.display()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "paths cited that do not exist: {missing:?}"
    );
    assert_eq!(
        cited_source_paths("see src/claim/wake.rs. And src/lock/undo.lua, not yaraus/src/x.rs"),
        ["src/claim/wake.rs", "src/lock/undo.lua"]
    );
}
