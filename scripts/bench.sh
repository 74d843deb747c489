#!/usr/bin/env bash
# Benchmarks (figures, never assertions): starts its own redis-server on a
# loopback port and prints a Markdown table. Extra arguments go to the
# harness: --runs N (whole-process runs, default 50), --cycles N (library
# acquire+renew+release cycles, default 5000).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-redis.sh
command -v flock >/dev/null || { echo "bench.sh: flock (util-linux) is required" >&2; exit 1; }
cargo bench --quiet --bench yaraus -- "$@"
