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

step "cargo fmt --check"
cargo fmt --check

step "cargo clippy --all-targets -- -D warnings"
cargo clippy --all-targets -- -D warnings

# Unit, integration and doc tests. Not --all-targets: that would also run the
# benchmark harness (benches/, figures rather than tests; scripts/bench.sh).
if [ "$#" -gt 0 ]; then
    step "cargo test --lib --bins --tests $*"
    cargo test --lib --bins --tests "$@"
else
    # The model checkers (tests/*_model) are pure computation, a third of
    # the suite's time, while the other crates mostly wait on real
    # redis-servers and child processes: the checkers run beside them, on
    # one thread, so that the waiting crates keep a core.
    step "cargo test --no-run (every test crate, built once)"
    cargo test --lib --bins --tests --no-run
    models=() others=()
    for f in tests/*.rs tests/*/main.rs; do
        name=${f#tests/}
        name=${name%/main.rs}
        name=${name%.rs}
        case $name in
            *_model) models+=(--test "$name") ;;
            *) others+=(--test "$name") ;;
        esac
    done
    models_log=$(mktemp)
    step "the model checkers, in the background: cargo test ${models[*]} -- --test-threads=1"
    cargo test "${models[@]}" -- --test-threads=1 >"$models_log" 2>&1 &
    models_pid=$!
    step "cargo test --lib --bins ${others[*]}"
    others_status=0
    cargo test --lib --bins "${others[@]}" || others_status=$?
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
