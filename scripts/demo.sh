#!/usr/bin/env bash
# A two-minute tour of yaraus on a fresh machine: installs redis-server if it
# is missing, builds yaraus, starts a throwaway Redis on a unix socket, then
# leases worker IDs to three concurrent processes and shows the pool.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n==> %s\n' "$*"; }

step "ensuring redis-server is installed"
scripts/install-redis.sh

step "cargo build --release"
cargo build --release
YARAUS=target/release/yaraus

DIR=$(mktemp -d "${TMPDIR:-/tmp}/yaraus-demo.XXXXXX")
SOCK="$DIR/redis.sock"
REDIS_PID=
cleanup() {
    if [ -n "$REDIS_PID" ]; then
        kill "$REDIS_PID" 2>/dev/null || true
        wait "$REDIS_PID" 2>/dev/null || true
    fi
    rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step "starting a throwaway redis-server on $SOCK"
redis-server --port 0 --unixsocket "$SOCK" --save "" --appendonly no --dir "$DIR" \
    >"$DIR/redis.log" 2>&1 &
REDIS_PID=$!
for _ in $(seq 100); do
    if [ -S "$SOCK" ] && { ! command -v redis-cli >/dev/null 2>&1 ||
        redis-cli -s "$SOCK" ping >/dev/null 2>&1; }; then
        break
    fi
    if ! kill -0 "$REDIS_PID" 2>/dev/null; then
        cat "$DIR/redis.log" >&2
        echo "demo.sh: redis-server exited" >&2
        exit 1
    fi
    sleep 0.1
done
if [ ! -S "$SOCK" ]; then
    cat "$DIR/redis.log" >&2
    echo "demo.sh: redis-server did not come up within 10 s" >&2
    exit 1
fi
REDIS="unix://$SOCK"

# Shows a command (quoted like a shell would need it), then runs it.
run() {
    local line="$" arg
    for arg in "$@"; do
        if [[ $arg =~ ^[A-Za-z0-9_./:=+-]+$ ]]; then
            line+=" $arg"
        else
            line+=" '${arg//\'/\'\\\'\'}'"
        fi
    done
    printf '%s\n' "$line"
    "$@"
}

step "creating the pool of worker IDs 1..1023"
run "$YARAUS" --redis "$REDIS" init --min 1 --max 1023

step "three concurrent workers, each leased its own ID (<> is replaced by it)"
pids=()
for _ in 1 2 3; do
    run "$YARAUS" --redis "$REDIS" run -- sh -c 'echo worker <>; sleep 1' &
    pids+=("$!")
done
status=0
for pid in "${pids[@]}"; do
    wait "$pid" || status=$?
done
if [ "$status" -ne 0 ]; then
    echo "demo.sh: a worker failed (exit status $status)" >&2
    exit "$status"
fi

step "pool statistics"
run "$YARAUS" --redis "$REDIS" stats

step "the first IDs and their leases (the three just released are the most recently freed)"
run "$YARAUS" --redis "$REDIS" list --format table | head -n 6

step "done; the throwaway Redis is removed on exit"
