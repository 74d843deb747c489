#!/usr/bin/env bash
# Makes sure `redis-server` is on PATH: the integration tests and the demo
# start real Redis servers. Installs Debian/Ubuntu's redis-server and
# redis-tools when it is missing; does nothing when it is present.
set -euo pipefail

if command -v redis-server >/dev/null 2>&1; then
    echo "install-redis.sh: $(redis-server --version)"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-redis.sh: redis-server is missing and apt-get is not available;" >&2
    echo "install Redis (>= 6.2) with your package manager and retry." >&2
    exit 1
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
        echo "install-redis.sh: not root and sudo is missing; cannot install redis-server." >&2
        exit 1
    fi
    SUDO=(sudo)
fi

echo "install-redis.sh: redis-server not found; installing redis-server and redis-tools with apt-get"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update
"${SUDO[@]}" apt-get install -y --no-install-recommends redis-server redis-tools

# The package may start a system-wide service; the tests never use it.
if ! command -v redis-server >/dev/null 2>&1; then
    echo "install-redis.sh: redis-server still not on PATH after installation" >&2
    exit 1
fi
echo "install-redis.sh: installed $(redis-server --version)"
