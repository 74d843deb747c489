#!/usr/bin/env bash
# Makes sure `redis-server` is on PATH: the integration tests and the demo
# start real Redis servers. Installs Debian/Ubuntu's redis-server and
# redis-tools when it is missing; does nothing when it is present.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if command -v redis-server >/dev/null 2>&1; then
    echo "install-redis.sh: $(redis-server --version)"
    exit 0
fi

echo "install-redis.sh: redis-server not found (Redis >= 6.2 is needed)"
scripts/apt-install.sh redis-server redis-tools

# The package may start a system-wide service; the tests never use it.
if ! command -v redis-server >/dev/null 2>&1; then
    echo "install-redis.sh: redis-server still not on PATH after installation" >&2
    exit 1
fi
echo "install-redis.sh: installed $(redis-server --version)"
