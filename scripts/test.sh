#!/usr/bin/env bash
# Runs the whole suite on node's test runner (every *.test.ts under src/), two files at a time.
set -euo pipefail
cd "$(dirname "$0")/.."

files=$(find src test -name '*.test.ts' 2>/dev/null | sort)
exec node --import tsx --test --test-concurrency=2 --test-reporter=spec $files "$@"
