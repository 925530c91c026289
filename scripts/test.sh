#!/usr/bin/env bash
# Runs the whole suite on node's test runner (every *.test.ts under src/ and sdk/test/), each test bundled with what
# it imports in .test-build/.run/ by scripts/test-build.mjs (a test process then loads a few files instead of some
# 1,300 one by one). Three files at a time on two cores: a file spends much of its time waiting (Chromium, a child process,
# a real deadline), and two at a time left about a third of the machine idle. SIGNET_TEST_CONCURRENCY overrides the
# three. One file under tsx, for its TypeScript line numbers: node --import tsx --test path/to/file.test.ts
set -euo pipefail
cd "$(dirname "$0")/.."
node scripts/test-build.mjs

# The slow kinds start first (the query-plan seeding, Chromium, end-to-end, the running server, the fuzzer), so the
# last files to finish are short ones and no core waits on a long file started late.
all=$(find src sdk/test -name '*.test.ts' | sort | sed -e 's|^|.test-build/.run/|' -e 's|\.ts$|.js|')
slow='query-plans|\.browser\.test|\.e2e\.test|running-server|fuzz'
files="$(grep -E "$slow" <<<"$all") $(grep -vE "$slow" <<<"$all")"
# One migrated PostgreSQL template for the run (src/testing/services.ts copies it per test), dropped at the end.
export SIGNET_TEST_PG_TEMPLATE="signet_tpl_$(date +%s)_$$"
trap 'node scripts/test-pg-template.mjs drop "$SIGNET_TEST_PG_TEMPLATE"' EXIT
node --test --test-concurrency="${SIGNET_TEST_CONCURRENCY:-3}" --test-reporter=spec $files "$@"
