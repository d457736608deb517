#!/usr/bin/env bash
# Benchmarks (tables, no pass/fail). `npm run bench`: setup, the relay against raw docker exec,
# the Screens overview's thumbnail cost (ms and bytes per grab), the flight recorder's costs, the
# extension host's own cost per MB on the direct channel (no VS Code, no container), the bridge
# process's memory over two minutes of an unpaced flood, then the same-run table. `npm run bench:screen` (--screen): only the same-run table, Bot Screen in a
# real VS Code against noVNC in a plain tab on one screen (test/bench/same-run.bench.mjs), with the
# extension packaged from this tree; it writes docs/benchmarks.md. Further arguments go to the
# same-run table: `--only flood,four` (parts: keys, idle, flood, bursty, animation, webview, four,
# geometry, soak), `--soak-minutes N` (the soak is opt-in).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --screen ]; then
	shift
	npm run --silent package >/dev/null
else
	bash scripts/setup.sh
	node esbuild.mjs --tests
	node out/test/bench/relay.bench.js
	node out/test/bench/thumbnail.bench.js
	node out/test/bench/recorder.bench.js
	node --experimental-websocket --no-warnings out/test/bench/direct-channel.bench.js
	node out/test/bench/bridge-memory.bench.js 2 max 400
fi
node test/bench/same-run.bench.mjs "$@"
