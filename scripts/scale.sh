#!/usr/bin/env bash
# Times clockgate summarize against cat of the same files on generated trees
# of 400 legs × 3,600 samples and × 7,200, and prints a table.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./scripts/scale "$@"
