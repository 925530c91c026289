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
# One Chromium for the run (src/testing/browser-server.ts): each page test connects and takes a fresh context, instead
# of some 30 launches. Stopped at the end by its own process id. Without it (no Chromium here, or it did not come up
# within 20 s) each test launches its own, or skips as before.
# SIGNET_TEST_ARGS: options for node's runner placed before the files (arguments after `npm test --` are files), e.g.
# a second reporter: SIGNET_TEST_ARGS="--test-reporter=tap --test-reporter-destination=stdout
# --test-reporter-destination=/tmp/run.tap" npm test
run_dir=$(mktemp -d)
browser_pid=
cleanup() {
  if [ -n "$browser_pid" ]; then kill "$browser_pid" 2>/dev/null && wait "$browser_pid" 2>/dev/null || true; fi
  rm -rf "$run_dir"
  node scripts/test-pg-template.mjs drop "$SIGNET_TEST_PG_TEMPLATE"
}
trap cleanup EXIT
if [ -x /usr/bin/chromium ]; then
  node --import tsx src/testing/browser-server.ts "$run_dir/chromium-ws" >"$run_dir/chromium.log" 2>&1 &
  browser_pid=$!
  for _ in $(seq 1 100); do [ -s "$run_dir/chromium-ws" ] && break; sleep 0.2; done
  if [ -s "$run_dir/chromium-ws" ]; then
    SIGNET_TEST_CHROMIUM_WS=$(cat "$run_dir/chromium-ws")
    export SIGNET_TEST_CHROMIUM_WS
  else
    echo "test.sh: the shared Chromium did not start; each page test launches its own" >&2
    cat "$run_dir/chromium.log" >&2
  fi
fi
node --test --test-concurrency="${SIGNET_TEST_CONCURRENCY:-3}" --test-reporter=spec ${SIGNET_TEST_ARGS:-} $files "$@"
