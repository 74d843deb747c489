#!/usr/bin/env bash
# Benchmarks (figures, never assertions): starts its own redis-servers (and a
# local etcd when etcd-server is installed) on loopback ports and prints
# Markdown tables. Extra arguments go to the harness: --runs N (whole-process
# runs, default 200), --cycles N (library cycles, default 5000).
#
# Besides the ordinary release build it measures a statically linked one
# (glibc crt-static, x86_64 only), whose start-up skips the dynamic loader.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-redis.sh
command -v flock >/dev/null || { echo "bench.sh: flock (util-linux) is required" >&2; exit 1; }
if ! command -v etcdctl >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server etcd-client >/dev/null ||
        echo "bench.sh: could not install etcd; the etcdctl comparison is skipped" >&2
fi
extra=()
host=$(rustc -vV | sed -n 's/^host: //p')
if [ "$host" = x86_64-unknown-linux-gnu ]; then
    RUSTFLAGS="-C target-feature=+crt-static" cargo build --quiet --release \
        --target "$host" --target-dir target/static --bin yaraus
    extra=(--static-bin "target/static/$host/release/yaraus")
fi
cargo bench --quiet --bench yaraus -- "${extra[@]}" "$@"
cargo bench --quiet --bench seq
cargo bench --quiet --bench hilo
cargo bench --quiet --bench handover
cargo bench --quiet --bench reports
cargo bench --quiet --bench renewals
# With valgrind, also each request's instructions (the figure load does not move).
if command -v valgrind >/dev/null; then
    cargo bench --quiet --bench renew_cost -- --instructions
else
    cargo bench --quiet --bench renew_cost
fi
cargo bench --quiet --bench health
# A fleet of up to 65,536 leases held through the library (about 8 minutes).
cargo bench --quiet --bench fleet
# Last: the SVG curves of docs/benchmarks.md from the CSV figures above.
cargo bench --quiet --bench plots
