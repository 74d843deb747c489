#!/usr/bin/env bash
# Makes sure the tools the tests use besides Redis are there, installing the
# Debian/Ubuntu packages that are missing: libfaketime (`faketime`: replicas
# of `yaraus index` with clocks offset) and perl with Time::HiRes (the probe
# children of the index tests log CLOCK_MONOTONIC timestamps), and openssl
# (the TLS test makes throwaway certificates).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

missing=()
command -v faketime >/dev/null 2>&1 || missing+=(faketime)
perl -MTime::HiRes=clock_gettime,CLOCK_MONOTONIC -e1 >/dev/null 2>&1 || missing+=(perl)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-test-tools.sh: faketime, perl (Time::HiRes) and openssl are present"
    exit 0
fi
scripts/apt-install.sh "${missing[@]}"
