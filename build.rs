//! Build script: what `yaraus --version` says beyond the crate's version,
//! as `rg --version` does: the git commit it was built from and the cargo
//! features it was built with. A bug report then names the exact code.
//!
//! The commit comes from `git rev-parse` run here (std::process::Command, no
//! crate for it): the short hash, with `-dirty` when tracked files differ
//! from it. Where there is no git, or the package is not the top of a git
//! checkout (a crates.io tarball, perhaps unpacked inside some other
//! repository, whose commit would be a lie), it is `unknown`.
//!
//! Cargo runs this again when HEAD, the branch it points to (loose or
//! packed) or the index change: a commit, a checkout or a `git add`. An
//! edit not yet staged is seen as `-dirty` only from the next of those;
//! watching every source file instead would rebuild the whole package on
//! each edit.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let commit = commit(&dir).unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=YARAUS_GIT_COMMIT={commit}");
    // A file, not a variable: the line is absent when no feature is on, and
    // `--version` takes it in at compile time.
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    std::fs::write(out.join("features_line"), features_line(std::env::vars()))
        .expect("OUT_DIR is writable");
}

/// `git` in `dir`: its trimmed stdout, or `None` if it is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The short hash of HEAD, `-dirty` if tracked files changed; `None` when
/// `dir` is not the top of a git checkout. (Public for
/// tests/conventions/version.rs, which checks that fallback.)
pub fn commit(dir: &Path) -> Option<String> {
    let top = PathBuf::from(git(dir, &["rev-parse", "--show-toplevel"])?);
    if top.canonicalize().ok()? != dir.canonicalize().ok()? {
        return None;
    }
    let hash = git(dir, &["rev-parse", "--short", "HEAD"])?;
    watch_git_files(dir);
    // --no-optional-locks: a status that refreshed the index would change
    // a file watched above, and run this script again at the next build.
    let changes = git(
        dir,
        &[
            "--no-optional-locks",
            "status",
            "--porcelain",
            "--untracked-files=no",
        ],
    )?;
    Some(if changes.is_empty() {
        hash
    } else {
        format!("{hash}-dirty")
    })
}

/// Asks cargo to run this script again when HEAD, its branch or the index
/// change. Paths come from git, since `.git` is a file in a worktree and
/// branches live in the common directory; a path that does not exist is
/// left out, as cargo would otherwise run the script at every build.
fn watch_git_files(dir: &Path) {
    let mut paths = vec!["HEAD".to_string(), "packed-refs".into(), "index".into()];
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        paths.push(branch);
    }
    for path in paths {
        if let Some(found) = git(dir, &["rev-parse", "--git-path", &path]) {
            let found = dir.join(found);
            if found.exists() {
                println!("cargo:rerun-if-changed={}", found.display());
            }
        }
    }
}

/// `--version`'s second line, `features: +a,+b`, after a newline; empty
/// when no feature is enabled. `vars`: the build script's environment, in
/// which cargo names each enabled feature `CARGO_FEATURE_NAME`.
pub fn features_line(vars: impl Iterator<Item = (String, String)>) -> String {
    let mut enabled: Vec<String> = vars
        .filter_map(|(k, _)| {
            k.strip_prefix("CARGO_FEATURE_")
                .map(|f| format!("+{}", f.to_lowercase().replace('_', "-")))
        })
        .collect();
    enabled.sort();
    if enabled.is_empty() {
        String::new()
    } else {
        format!("\nfeatures: {}", enabled.join(","))
    }
}
