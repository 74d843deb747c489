//! Where the client libraries of the suite are: scripts/install-test-tools.sh
//! installs them, pinned, under `$YARAUS_TEST_TOOLS` (default
//! `~/.cache/yaraus/test-tools`), outside the work tree so that every
//! checkout and CI's fresh clone share one copy:
//!
//! * `py-redis/`: a Python virtual environment with redis-py alone (its own
//!   parsers);
//! * `py-hiredis/`: the same redis-py with hiredis, which redis-py then
//!   uses to parse every reply;
//! * `node/node_modules/`: node-redis and ioredis.
//!
//! A test that lacks one fails, naming the script; none is skipped.

use std::path::PathBuf;

/// The redis-py release the script pins, and the tests expect.
pub const REDIS_PY: &str = "8.1.0";

fn tools_dir() -> PathBuf {
    match std::env::var_os("YARAUS_TEST_TOOLS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").expect("HOME is set"))
            .join(".cache/yaraus/test-tools"),
    }
}

/// The Python of the virtual environment `venv`; fails the test without it.
pub fn python(venv: &str, purpose: &str) -> PathBuf {
    let python = tools_dir().join(venv).join("bin/python");
    assert!(
        python.exists(),
        "{} is missing: {purpose}. Install it with scripts/install-test-tools.sh \
         (or point YARAUS_TEST_TOOLS at where it installed them).",
        python.display()
    );
    python
}

/// A script of `tests/seq_serve/clients/`.
pub fn client_script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/seq_serve/clients")
        .join(name)
}

/// The `node_modules` with node-redis and ioredis; fails the test without
/// them (or without node).
pub fn node_modules(purpose: &str) -> PathBuf {
    super::common::tools::require_test_tool("node", "nodejs (20 or later)", purpose);
    let dir = tools_dir().join("node/node_modules");
    for module in ["redis", "ioredis"] {
        assert!(
            dir.join(module).join("package.json").exists(),
            "{} is missing: {purpose}. Install it with scripts/install-test-tools.sh \
             (or point YARAUS_TEST_TOOLS at where it installed them).",
            dir.join(module).display()
        );
    }
    dir
}
