#!/usr/bin/env bash
# Runs the whole suite on node's test runner (every *.test.ts under src/ and sdk/test/). Three files at a time on two
# cores: a file spends much of its time waiting (Chromium, a child process, a real deadline), and two at a time left
# about a third of the machine idle. SIGNET_TEST_CONCURRENCY overrides the three.
set -euo pipefail
cd "$(dirname "$0")/.."

files=$(find src sdk/test -name '*.test.ts' | sort)
exec node --import tsx --test --test-concurrency="${SIGNET_TEST_CONCURRENCY:-3}" --test-reporter=spec $files "$@"
