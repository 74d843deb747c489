//! The programs the tests need besides yaraus, and the one way a test
//! demands one: [`require`] fails the test, naming the program and the
//! script that installs it. A test never prints "skipped" and passes: a
//! machine that lacks a tool must show up red, not as a green run that
//! proved nothing.
//!
//! redis-server comes from `scripts/install-redis.sh`; everything else
//! (redis-cli and redis-benchmark, script(1), bash, faketime, perl,
//! openssl, promtool) from `scripts/install-test-tools.sh`, which
//! `scripts/test.sh` runs first.

use std::path::Path;

/// Whether `program` is an executable file in a directory of `PATH`.
pub fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            Path::new(&dir.join(program))
                .metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// Fails the test unless `program` is on `PATH`. `package` is the
/// Debian/Ubuntu package that has it; `installer` the script of `scripts/`
/// that installs it; `purpose` what the test does with it.
pub fn require(program: &str, package: &str, installer: &str, purpose: &str) {
    assert!(
        on_path(program),
        "{program} is not on PATH: {purpose}. Install it with scripts/{installer} \
         (Debian/Ubuntu package {package}), or put it on PATH."
    );
}

/// [`require`] for a tool of `scripts/install-test-tools.sh`.
pub fn require_test_tool(program: &str, package: &str, purpose: &str) {
    require(program, package, "install-test-tools.sh", purpose);
}

/// The path of libfaketime, for `LD_PRELOAD`; fails the test without it.
pub fn faketime_library() -> String {
    let candidates = [
        "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
        "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
        "/usr/lib/faketime/libfaketime.so.1",
    ];
    candidates
        .iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or_else(|| {
            panic!(
                "libfaketime is not installed: a host with a skewed clock is simulated with it. \
                 Install it with scripts/install-test-tools.sh (Debian/Ubuntu package faketime): \
                 {candidates:?}"
            )
        })
        .to_string()
}
