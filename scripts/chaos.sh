#!/usr/bin/env bash
# The fault-injection soak: runs the chaos suite (tests/chaos/) in a release
# build for about N minutes — every fault test loops trials until its share
# of the time is up (CHAOS_MINUTES) — and prints the aggregated report: per
# fault, trials, faults injected, overlaps (must be 0; the
# master-restart-empty-delay-0 row is the checker's proof that it sees one,
# and must show some), children killed (yaraus exit 124; sigkilled: of those,
# children that needed the SIGKILL), yaraus exits 125 (a client that gave up
# where it should have retried), and the time to recovery (p50, p90, max
# over every trial); then the rolling replacement's lines (every node of a
# seq, a hilo and a lock deployment wiped in turn: calls answered,
# duplicates and order violations, 0, and the time from a wipe to the node
# voting again; and its run clients on a Sentinel-watched pool restarted
# empty or failed over between the wipes: lives, overlaps (must be 0),
# restarts, failovers, and the time to every id held again).
#
#   scripts/chaos.sh --minutes 10       # default: 5
#   scripts/chaos.sh --minutes 2 --keep # keep the raw report file
#
# Exits non-zero if any test failed (an overlap fails its test).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n==> %s\n' "$*"; }

minutes=5
keep=false
while [ $# -gt 0 ]; do
    case "$1" in
        --minutes)
            minutes=${2:?--minutes needs a value}
            shift 2
            ;;
        --minutes=*)
            minutes=${1#--minutes=}
            shift
            ;;
        --keep)
            keep=true
            shift
            ;;
        -h | --help)
            sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "chaos.sh: unknown argument: $1 (try --help)" >&2
            exit 2
            ;;
    esac
done
if ! [[ $minutes =~ ^[0-9]+([.][0-9]+)?$ ]]; then
    echo "chaos.sh: --minutes wants a number of minutes, not '$minutes'" >&2
    exit 2
fi

step "ensuring redis-server is installed (scripts/install-redis.sh)"
scripts/install-redis.sh

step "building the chaos suite (release)"
cargo test --release --test faults --no-run

report=$(mktemp "${TMPDIR:-/tmp}/yaraus-chaos-report.XXXXXX")
if ! $keep; then
    trap 'rm -f "$report"' EXIT
fi

step "soaking for about $minutes minute(s): cargo test --release --test faults chaos::"
started=$(date +%s)
status=0
CHAOS_MINUTES=$minutes CHAOS_REPORT=$report \
    cargo test --release --test faults chaos:: -- --test-threads=1 --nocapture || status=$?
elapsed=$(($(date +%s) - started))

step "aggregated report ($elapsed s)"
awk '
    /^rolling/ { next }
    function field(name,    i, kv) {
        for (i = 1; i <= NF; i++) {
            split($i, kv, "=")
            if (kv[1] == name) return substr($i, length(name) + 2)
        }
        return ""
    }
    {
        f = field("fault")
        if (!(f in trials)) order[n++] = f
        trials[f] += field("trials"); faults[f] += field("faults")
        overlaps[f] += field("overlaps"); killed[f] += field("killed")
        sigkilled[f] += field("sigkilled"); lives[f] += field("lives")
        exit125[f] += field("exit125")
        s = field("recovery_ms")
        if (s != "") samples[f] = (samples[f] == "" ? s : samples[f] "," s)
    }
    function pct(list, p,    a, m, i, j, t) {
        m = split(list, a, ",")
        if (m == 0) return "-"
        for (i = 2; i <= m; i++) {          # insertion sort, numerically
            t = a[i] + 0
            for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]
            a[j + 1] = t
        }
        i = int((m - 1) * p + 0.5) + 1
        return a[i] "ms"
    }
    END {
        if (n == 0) { print "no report lines (did every test fail early?)"; exit }
        printf "%-44s %6s %6s %8s %6s %9s %6s %7s %9s %9s %9s\n", "fault", "trials", "faults",
            "overlaps", "killed", "sigkilled", "lives", "exit125", "rec p50", "rec p90", "rec max"
        for (i = 0; i < n; i++) {
            f = order[i]
            printf "%-44s %6d %6d %8d %6d %9d %6d %7d %9s %9s %9s\n", f, trials[f], faults[f],
                overlaps[f], killed[f], sigkilled[f], lives[f], exit125[f],
                pct(samples[f], 0.5), pct(samples[f], 0.9), pct(samples[f], 1)
        }
    }
' "$report"
# The rolling replacement checks histories, not lives: its own lines.
grep '^rolling' "$report" || true
if $keep; then
    echo "raw report lines: $report"
fi

if [ "$status" -ne 0 ]; then
    step "the chaos suite FAILED (cargo test exit $status); see its output above"
    exit "$status"
fi
step "chaos soak passed: no overlap (but in the delay-0 row, the checker's own proof)"
