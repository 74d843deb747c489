#!/usr/bin/env bash
# Makes sure the tools the tests use besides Redis are there, installing the
# Debian/Ubuntu packages that are missing: libfaketime (`faketime`: replicas
# of `yaraus index` with clocks offset), perl with Time::HiRes (the probe
# children of the index tests log CLOCK_MONOTONIC timestamps), openssl (the
# TLS test makes throwaway certificates), redis-cli and redis-benchmark
# (redis-tools: the real clients of `yaraus seq serve`), script(1)
# (bsdutils, of util-linux: the terminal tests run yaraus on a
# pseudo-terminal), bash (the job-control tests type into an interactive
# bash), man (man-db, which brings groff: the man pages are checked with
# `man --warnings`), promtool (prometheus: every `--metrics-listen` page is
# checked with `promtool check metrics`), python3 with venv (below), and for
# tests/package (the .deb of scripts/package.sh): dpkg-dev (dpkg-deb,
# dpkg-shlibdeps), binutils (strip), lintian, systemd (systemd-analyze
# verify of the units; PID 1 need not be systemd) and cargo-deb, pinned
# where package.sh pins it.
#
# Then the client libraries that tests/seq_serve points at `yaraus seq
# serve`, pinned, in Python virtual environments under $YARAUS_TEST_TOOLS
# (default ~/.cache/yaraus/test-tools; tests/seq_serve/libs.rs looks there):
#   py-redis/    redis-py alone (its own RESP2 and RESP3 parsers)
#   py-hiredis/  the same redis-py with hiredis, which it then parses with
# Each is made again only when its pinned versions are not what it holds.
#
# A test that lacks one of them fails, naming it and this script
# (tests/common/tools.rs, tests/seq_serve/libs.rs); none is skipped.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

REDIS_PY=8.1.0 # tests/seq_serve/libs.rs REDIS_PY says the same
HIREDIS_PY=3.5.0

missing=()
command -v faketime >/dev/null 2>&1 || missing+=(faketime)
perl -MTime::HiRes=clock_gettime,CLOCK_MONOTONIC -e1 >/dev/null 2>&1 || missing+=(perl)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
{ command -v redis-cli && command -v redis-benchmark; } >/dev/null 2>&1 || missing+=(redis-tools)
command -v script >/dev/null 2>&1 || missing+=(bsdutils)
command -v bash >/dev/null 2>&1 || missing+=(bash)
command -v man >/dev/null 2>&1 || missing+=(man-db)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
{ command -v dpkg-deb && command -v dpkg-shlibdeps; } >/dev/null 2>&1 || missing+=(dpkg-dev)
command -v strip >/dev/null 2>&1 || missing+=(binutils)
command -v lintian >/dev/null 2>&1 || missing+=(lintian)
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-test-tools.sh: faketime, perl (Time::HiRes), openssl, redis-cli," \
        "redis-benchmark, script, bash, man, promtool, python3 (venv), dpkg-dev, strip, lintian and" \
        "systemd-analyze are present"
else
    scripts/apt-install.sh "${missing[@]}"
fi

# cargo-deb, at the version scripts/package.sh pins (it would install it
# too, but inside a test's time budget).
CARGO_DEB=$(sed -n 's/^CARGO_DEB_VERSION=//p' scripts/package.sh)
if [ "$(cargo deb --version 2>/dev/null | awk '{print $2}')" = "$CARGO_DEB" ]; then
    echo "install-test-tools.sh: cargo-deb $CARGO_DEB is present"
else
    # --debug: the tests package a few megabytes in package.sh's --fast
    # mode, where cargo-deb's own speed does not show, and an unoptimised
    # build takes a third of the time (about 100 s against 300 s on two
    # cores), which CI pays on every fresh machine.
    echo "install-test-tools.sh: installing cargo-deb $CARGO_DEB (cargo install --locked --debug)"
    cargo install cargo-deb --version "$CARGO_DEB" --locked --debug
fi

tools="${YARAUS_TEST_TOOLS:-$HOME/.cache/yaraus/test-tools}"
mkdir -p "$tools"

# venv NAME CHECK PACKAGE...: $tools/NAME holds PACKAGE..., made anew unless
# the Python one-liner CHECK passes in it.
venv() {
    local dir="$tools/$1" check=$2
    shift 2
    if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c "$check" >/dev/null 2>&1; then
        echo "install-test-tools.sh: $dir has $*"
        return
    fi
    echo "install-test-tools.sh: installing $* into $dir"
    python3 -m venv --clear "$dir"
    "$dir/bin/pip" install --quiet --disable-pip-version-check "$@"
    "$dir/bin/python" -c "$check"
}

venv py-redis "import redis, importlib.util as u; \
assert redis.__version__ == '$REDIS_PY' and u.find_spec('hiredis') is None" \
    "redis==$REDIS_PY"
venv py-hiredis "import redis, hiredis; \
assert redis.__version__ == '$REDIS_PY' and hiredis.__version__ == '$HIREDIS_PY'" \
    "redis==$REDIS_PY" "hiredis==$HIREDIS_PY"

# node-redis and ioredis, pinned, in $tools/node/node_modules (the tests set
# NODE_PATH to it), when node and npm are there. They need Node.js 20 or
# later, which the machine image brings (Debian 12's nodejs is 18, too old
# for them), so it is not installed here; tests/seq_serve/node_clients.rs
# fails naming this script without them.
NODE_REDIS=6.3.1
IOREDIS=6.0.0
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
    node_dir="$tools/node"
    have() { node -p "require('$node_dir/node_modules/$1/package.json').version" 2>/dev/null; }
    if [ "$(have redis)" = "$NODE_REDIS" ] && [ "$(have ioredis)" = "$IOREDIS" ]; then
        echo "install-test-tools.sh: $node_dir has redis@$NODE_REDIS ioredis@$IOREDIS"
    else
        echo "install-test-tools.sh: installing redis@$NODE_REDIS ioredis@$IOREDIS into $node_dir"
        mkdir -p "$node_dir"
        npm install --prefix "$node_dir" --no-audit --no-fund --silent \
            "redis@$NODE_REDIS" "ioredis@$IOREDIS"
    fi
else
    echo "install-test-tools.sh: node or npm is missing: the node-redis and ioredis tests" \
        "will fail until Node.js 20+ and npm are installed" >&2
fi
