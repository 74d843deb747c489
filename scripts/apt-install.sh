#!/usr/bin/env bash
# Installs Debian/Ubuntu packages with apt-get (through sudo when not root):
# the one place that knows how, for install-redis.sh and install-test-tools.sh.
# Usage: scripts/apt-install.sh PACKAGE...
set -euo pipefail

if ! command -v apt-get >/dev/null 2>&1; then
    echo "apt-install.sh: apt-get is not available; install $* with your package manager and retry." >&2
    exit 1
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
        echo "apt-install.sh: not root and sudo is missing; cannot install $*." >&2
        exit 1
    fi
    SUDO=(sudo)
fi

echo "apt-install.sh: installing $* with apt-get"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update
"${SUDO[@]}" apt-get install -y --no-install-recommends "$@"
