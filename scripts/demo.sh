#!/usr/bin/env bash
# A two-minute tour of yaraus on a fresh machine: installs redis-server if it
# is missing, builds yaraus, starts a throwaway Redis on a unix socket, then
# leases worker IDs to three concurrent processes and shows the pool; last,
# a snowflake-style generator moves to a "host" whose clock is 2 s behind
# (libfaketime, installed if missing) and the clock guard keeps its ids new.
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

step "the clock guard: worker ID 1 moves to a host whose clock is 2 s behind"
FAKETIME_LIB=$(ls /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1 \
    2>/dev/null | head -n 1 || true)
if [ -z "$FAKETIME_LIB" ]; then
    echo "installing libfaketime (faketime) to simulate the lagging host"
    SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get install -y -qq faketime >/dev/null
    FAKETIME_LIB=$(ls /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1 \
        2>/dev/null | head -n 1)
fi
# (ms << 22) | (worker << 12) | sequence, for half a second, like katsubushi.
GENERATOR='use Time::HiRes qw(time); my ($last, $seq, @ids) = (-1, 0);
my $end = time() + 0.5;
while (time() < $end) {
  my $ms = int(time() * 1000); next if $ms < $last;
  if ($ms == $last) { next if ++$seq >= 4096 } else { ($last, $seq) = ($ms, 0) }
  push @ids, ($ms << 22) | ($ARGV[0] << 12) | $seq;
}
printf "made %d ids, the first %d, the last %d\n", scalar @ids, $ids[0], $ids[-1];'
FAST=(--namespace clockdemo run --interval 200ms --kill-after 100ms)
run "$YARAUS" --redis "$REDIS" --namespace clockdemo init --min 1 --max 1
echo "# host A, on time:"
run "$YARAUS" --redis "$REDIS" "${FAST[@]}" -- perl -e "$GENERATOR" '<>'
echo "# host B, 2 s behind: it waits until its clock is past A's last id"
LD_PRELOAD="$FAKETIME_LIB" FAKETIME=-2s FAKETIME_DONT_FAKE_MONOTONIC=1 \
    run "$YARAUS" --redis "$REDIS" "${FAST[@]}" -- perl -e "$GENERATOR" '<>'

step "done; the throwaway Redis is removed on exit"
