#!/usr/bin/env bash
# Makes sure the tools the tests use besides Redis are there, installing the
# Debian/Ubuntu packages that are missing: libfaketime (`faketime`: replicas
# of `yaraus index` with clocks offset), perl with Time::HiRes (the probe
# children of the index tests log CLOCK_MONOTONIC timestamps), openssl (the
# TLS test makes throwaway certificates), redis-cli and redis-benchmark
# (redis-tools: the real clients of `yaraus seq serve`), script(1)
# (bsdutils, of util-linux: the terminal tests run yaraus on a
# pseudo-terminal) and bash (the job-control tests type into an interactive
# bash). A test that lacks one of them fails, naming it and this script
# (tests/common/tools.rs); none is skipped.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

missing=()
command -v faketime >/dev/null 2>&1 || missing+=(faketime)
perl -MTime::HiRes=clock_gettime,CLOCK_MONOTONIC -e1 >/dev/null 2>&1 || missing+=(perl)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
{ command -v redis-cli && command -v redis-benchmark; } >/dev/null 2>&1 || missing+=(redis-tools)
command -v script >/dev/null 2>&1 || missing+=(bsdutils)
command -v bash >/dev/null 2>&1 || missing+=(bash)
if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-test-tools.sh: faketime, perl (Time::HiRes), openssl, redis-cli," \
        "redis-benchmark, script and bash are present"
    exit 0
fi
scripts/apt-install.sh "${missing[@]}"
