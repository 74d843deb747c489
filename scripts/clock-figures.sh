#!/usr/bin/env bash
# The clock guard's figures on this machine (docs/benchmarks.md): how far the
# horizon a release records is past the command's last wall-clock reading,
# and how well a renewal measures this host's offset from the server's clock
# (the truth is 0: the server runs on this machine). Starts a throwaway
# redis-server; uses target/release/yaraus (built if missing).
# Usage: scripts/clock-figures.sh [HAND_OVERS] [RENEWALS]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
HAND_OVERS=${1:-20}
RENEWALS=${2:-50}
scripts/install-redis.sh >/dev/null
[ -x target/release/yaraus ] || cargo build --release
Y=target/release/yaraus
DIR=$(mktemp -d "${TMPDIR:-/tmp}/yaraus-clock.XXXXXX")
redis-server --port 0 --unixsocket "$DIR/r.sock" --save "" --dir "$DIR" >/dev/null 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$DIR"' EXIT
for _ in $(seq 100); do [ -S "$DIR/r.sock" ] && break; sleep 0.05; done
R="unix://$DIR/r.sock"
record() { redis-cli -s "$DIR/r.sock" hget yaraus:clock A1; }
"$Y" --redis "$R" init --min 1 --max 1 >/dev/null 2>&1
echo "horizon recorded at release minus the command's last wall-clock reading, ms:"
for _ in $(seq "$HAND_OVERS"); do
    "$Y" --redis "$R" run --interval 200ms --kill-after 100ms -- \
        perl -MTime::HiRes=time -e 'printf "%d\n", time() * 1000' >"$DIR/end" 2>/dev/null
    echo $(( $(record | cut -d' ' -f1) - $(cat "$DIR/end") ))
done | sort -n | awk '{ v[NR] = $1 } END { printf "  n=%d min=%d p50=%d max=%d\n", NR, v[1], v[int((NR + 1) / 2)], v[NR] }'
echo "offset measured at each renewal (truth 0), ms, and its error bound:"
"$Y" --redis "$R" run --interval 100ms --kill-after 50ms -- sleep 600 2>/dev/null &
RUN=$!
sleep 1
for _ in $(seq "$RENEWALS"); do record | cut -d' ' -f2,3; sleep 0.1; done |
    awk '{ o = $1 < 0 ? -$1 : $1; if (o > e_max_o) e_max_o = o; if ($2 > e) e = $2;
           if (o > $2) bad++; n++ }
         END { printf "  n=%d max |offset|=%d max error bound=%d outside the bound=%d\n", n, e_max_o, e, bad + 0 }'
kill "$RUN"; wait "$RUN" 2>/dev/null || true
