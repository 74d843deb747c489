#!/usr/bin/env bash
# A/B of two yaraus binaries on the pool reports (list, stats): a pool of
# 2^20 ids (three leased for an hour, one lease expired and not reclaimed)
# on a fresh redis-server (unix socket, no persistence). First checks that
# both print the same `list` and `list --using`, JSON and table, ttls aside
# (they depend on the instant); then times `list` and `list --using` as
# whole processes, the two binaries taking turns run after run, and prints
# one CSV line per run (binary,command,µs) and the medians.
#
#   scripts/reports-ab.sh OLD_BINARY NEW_BINARY [RUNS]   (default 7 runs)
set -euo pipefail
old=$(realpath "$1") new=$(realpath "$2") runs=${3:-7}
dir=$(mktemp -d)
trap 'kill "$(cat "$dir/pid")" 2>/dev/null || true; rm -rf "$dir"' EXIT
sock=$dir/redis.sock url="unix://$sock?ns=ab"
redis-server --port 0 --unixsocket "$sock" --save '' --appendonly no --dir "$dir" >"$dir/log" 2>&1 &
echo $! >"$dir/pid"
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
"$new" -q --redis "$url" init --max 1048576 >/dev/null
now=$(redis-cli -s "$sock" TIME | head -1)
lease() { redis-cli -s "$sock" ZADD ab:ids XX "$2" "$1" >/dev/null
          redis-cli -s "$sock" HSET ab:clients "$1" "holder-$1" >/dev/null; }
for m in A1 G524288 G1048576; do lease "$m" $((now + 3600)); done
lease B42 $((now - 60))
strip() { sed -E 's/"ttl":[0-9.]+/"ttl":T/; s/ (yes|no) +[0-9.]+ / \1 T /'; }
for format in json table; do
    for cmd in "list" "list --using"; do
        "$old" --redis "$url" $cmd --format $format | strip >"$dir/old"
        "$new" --redis "$url" $cmd --format $format | strip >"$dir/new"
        cmp -s "$dir/old" "$dir/new" || { echo "differ: $cmd --format $format" >&2; exit 1; }
        echo "identical: $cmd --format $format ($(wc -l <"$dir/new") lines)"
    done
done
for _ in $(seq "$runs"); do
    for which in old new; do
        bin=$old; [ $which = new ] && bin=$new
        for cmd in "list" "list --using"; do
            t0=$(date +%s%N); "$bin" --redis "$url" $cmd >/dev/null; t1=$(date +%s%N)
            echo "$which,$cmd,$(((t1 - t0) / 1000))"
        done
    done
done | tee "$dir/runs"
python3 - "$dir/runs" <<'PY'
import collections, statistics, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    which, cmd, us = line.strip().split(",")
    d[(which, cmd)].append(int(us) / 1000)
for (which, cmd), v in sorted(d.items()):
    print(f"{which} {cmd}: median {statistics.median(v):.1f} ms over {len(v)} runs")
PY
