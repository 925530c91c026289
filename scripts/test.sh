#!/usr/bin/env bash
# Runs the whole suite on node's test runner (every *.test.ts under src/ and sdk/test/), two files at a time.
set -euo pipefail
cd "$(dirname "$0")/.."

files=$(find src sdk/test -name '*.test.ts' | sort)
exec node --import tsx --test --test-concurrency=2 --test-reporter=spec $files "$@"
