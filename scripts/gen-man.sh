#!/usr/bin/env bash
# Regenerates man/*.1 from the clap definitions (see tests/man.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
YARAUS_UPDATE_MAN=1 cargo test --quiet --test man
ls man/
