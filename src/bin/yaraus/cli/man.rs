//! The man pages under `man/` are generated from the clap definitions and
//! checked in. This test regenerates them and fails when the checked-in
//! copies are stale; `YARAUS_UPDATE_MAN=1 cargo test --bin yaraus man_pages`
//! (or `scripts/gen-man.sh`) rewrites them.

use clap::CommandFactory;
use std::collections::BTreeMap;
use std::path::Path;

fn pages_in(dir: &Path) -> BTreeMap<String, String> {
    let mut pages = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "1") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            pages.insert(name, std::fs::read_to_string(&path).unwrap());
        }
    }
    pages
}

#[test]
fn man_pages_are_up_to_date() {
    let fresh = tempfile::tempdir().unwrap();
    // The crate's version alone: the commit in `--version` would make the
    // checked-in pages stale at every commit.
    let cmd = super::Cli::command()
        .version(env!("CARGO_PKG_VERSION"))
        .long_version(None::<&str>);
    clap_mangen::generate_to(cmd, fresh.path()).unwrap();
    let generated = pages_in(fresh.path());
    assert!(generated.contains_key("yaraus.1"));
    assert!(generated.contains_key("yaraus-run.1"));

    let man_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    if std::env::var_os("YARAUS_UPDATE_MAN").is_some() {
        std::fs::create_dir_all(&man_dir).unwrap();
        for old in pages_in(&man_dir).keys() {
            std::fs::remove_file(man_dir.join(old)).unwrap();
        }
        for (name, text) in &generated {
            std::fs::write(man_dir.join(name), text).unwrap();
        }
        return;
    }
    let checked_in = pages_in(&man_dir);
    let stale: Vec<&String> = generated
        .keys()
        .chain(checked_in.keys())
        .filter(|name| generated.get(*name) != checked_in.get(*name))
        .collect();
    assert!(
        stale.is_empty(),
        "man pages are stale: {stale:?}; run scripts/gen-man.sh and commit man/"
    );
}
