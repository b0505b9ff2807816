#!/usr/bin/env bash
# Times clockgate summarize --json and --out against cat of the same files,
# side by side in one run: a generated tree in every stream layout other
# recorders write, and the memory shapes (400 legs × 7,200 samples, 20,000
# legs × 60). Prints a table; flags are scripts/scale's (-runs, -legs, …).
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./scripts/scale "$@"
