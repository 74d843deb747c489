//! `yaraus --version` names the build, as `rg --version` does: the crate's
//! version, the git commit (short hash, `-dirty` when tracked files
//! differed from it) and, on a second line, the enabled cargo features if
//! any are; `-V` is the first line alone. build.rs works them out; this
//! checks them against git.

use super::*;
use std::path::Path;

/// build.rs itself, for its fallback outside a git checkout.
#[allow(dead_code)]
#[path = "../../build.rs"]
mod build_script;

/// What build.rs should have found, worked out another way: the short hash
/// of HEAD when the crate is the top of a git checkout (git's prefix for
/// it is empty), else `unknown`.
fn expected_commit() -> String {
    let git = |args: &[&str]| -> Option<String> {
        let out = common::command("git")
            .arg("-C")
            .arg(env!("CARGO_MANIFEST_DIR"))
            .args(args)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--show-prefix"]).as_deref() {
        Some("") => git(&["rev-parse", "--short", "HEAD"]).expect("HEAD of the checkout"),
        _ => "unknown".to_string(),
    }
}

/// A crates.io tarball has no git: build.rs says nothing rather than guess,
/// and a tree unpacked inside another repository does not take its commit.
#[test]
fn outside_a_checkout_the_commit_is_unknown() {
    let plain = tempfile::tempdir().unwrap();
    assert_eq!(build_script::commit(plain.path()), None);
    let inside = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    assert_eq!(build_script::commit(&inside), None);
}

#[test]
fn version_names_the_commit_and_no_features_when_none_is_enabled() {
    let commit = expected_commit();
    let long = yaraus(&["--version"]);
    assert_eq!(long.code, Some(0), "{long:#?}");
    let lines: Vec<&str> = long.stdout.lines().collect();
    // No feature is declared, so none is enabled, and no line says so.
    assert_eq!(lines.len(), 1, "{long:#?}");
    let first = lines[0];
    let rev = first
        .strip_prefix(concat!("yaraus ", env!("CARGO_PKG_VERSION"), " (rev "))
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or_else(|| panic!("not 'yaraus VERSION (rev COMMIT)': {first:?}"));
    assert!(
        rev == commit || rev.strip_suffix("-dirty") == Some(commit.as_str()),
        "--version names {rev:?}, git says {commit:?}"
    );
    if commit == "unknown" {
        assert_eq!(rev, "unknown");
    }

    let short = yaraus(&["-V"]);
    assert_eq!(short.code, Some(0), "{short:#?}");
    assert_eq!(short.stdout, format!("{first}\n"));
    // A subcommand's --version is the same build.
    let sub = yaraus(&["run", "--version"]);
    assert_eq!(
        sub.stdout,
        long.stdout.replacen("yaraus ", "yaraus-run ", 1),
        "{sub:#?}"
    );
}

#[test]
fn enabled_features_get_a_second_line_and_none_gets_none() {
    let vars = |names: &[&str]| {
        names
            .iter()
            .map(|n| (n.to_string(), "1".to_string()))
            .collect::<Vec<_>>()
            .into_iter()
    };
    assert_eq!(build_script::features_line(vars(&["PATH", "HOME"])), "");
    assert_eq!(
        build_script::features_line(vars(&["CARGO_FEATURE_TLS_NATIVE", "CARGO_FEATURE_ACL"])),
        "\nfeatures: +acl,+tls-native"
    );
}
