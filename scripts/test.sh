#!/usr/bin/env bash
# Runs the whole suite on node's test runner. Installs dependencies first when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci
files=$(find src test -name '*.test.ts' 2>/dev/null | sort)
exec node --import tsx --test --test-concurrency=2 --test-reporter=spec $files "$@"
