#!/usr/bin/env bash
# Applies each mutation of the contract's checks to a copy of the repository,
# one at a time, and confirms the tests go red. Prints a table; exits 1 if
# any mutation survives. The working tree is never touched.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./scripts/mutants "$@"
