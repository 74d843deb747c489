#!/usr/bin/env bash
# The whole check, as CI runs it: formatting, lints, then every test against
# real redis-server processes. Extra arguments go to `cargo test`
# (e.g. scripts/test.sh -- --test-threads=1).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n==> %s\n' "$*"; }

step "ensuring redis-server is installed (scripts/install-redis.sh)"
scripts/install-redis.sh
step "ensuring the other test tools are installed (scripts/install-test-tools.sh)"
scripts/install-test-tools.sh

# A minimal rustup profile lacks rustfmt and clippy.
for component in rustfmt clippy; do
    subcommand=${component/rustfmt/fmt}
    if ! cargo "$subcommand" --version >/dev/null 2>&1; then
        if command -v rustup >/dev/null 2>&1; then
            step "installing the $component component (rustup component add $component)"
            rustup component add "$component"
        else
            echo "test.sh: cargo $subcommand is missing and rustup is not available" >&2
            exit 1
        fi
    fi
done

step "cargo fmt --all --check"
cargo fmt --all --check

step "cargo clippy --workspace --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

# Unit, integration and doc tests. Not --all-targets: that would also run the
# benchmark harness (benches/, figures rather than tests; scripts/bench.sh).
if [ "$#" -gt 0 ]; then
    step "cargo test --lib --bins --tests $*"
    cargo test --lib --bins --tests "$@"
else
    # Three test binaries. The model checkers (tests/models.rs, in the
    # package yaraus-models so that they alone are optimised) are pure
    # computation: they run in the background on one thread. The
    # integration tests mostly wait on real redis-servers and child
    # processes, so four run at once on two cores; the fault-injection
    # suite (tests/faults.rs: many clients, servers killed and frozen) runs
    # after them with the default two, so that its timing is not squeezed.
    step "cargo test --no-run (every test binary, built once)"
    cargo test --workspace --lib --bins --tests --no-run
    models_log=$(mktemp)
    step "the model checkers, in the background: cargo test -p yaraus-models -- --test-threads=1"
    cargo test -p yaraus-models -- --test-threads=1 >"$models_log" 2>&1 &
    models_pid=$!
    others_status=0
    step "cargo test --lib --bins --test integration -- --test-threads=4"
    cargo test --lib --bins --test integration -- --test-threads=4 || others_status=$?
    step "cargo test --test faults"
    cargo test --test faults || others_status=$?
    models_status=0
    wait "$models_pid" || models_status=$?
    step "the model checkers' output"
    cat "$models_log"
    rm -f "$models_log"
    if [ "$others_status" -ne 0 ] || [ "$models_status" -ne 0 ]; then
        echo "test.sh: tests failed (status $others_status; model checkers $models_status)" >&2
        exit 1
    fi
fi
step "cargo test --doc"
cargo test --doc
step "cargo doc --no-deps (warnings denied: broken intra-doc links fail)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet

step "all checks passed"
