#!/usr/bin/env bash
# Regenerates man/*.1 from the clap definitions (see src/bin/yaraus/cli/man/).
set -euo pipefail
cd "$(dirname "$0")/.."
YARAUS_UPDATE_MAN=1 cargo test --quiet --bin yaraus man_pages
ls man/
