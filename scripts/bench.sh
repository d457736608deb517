#!/usr/bin/env bash
# Benchmarks (tables, no pass/fail): relay throughput against raw docker exec, and in a real
# VS Code the Start-to-first-frame time and the bridge's throughput into the webview.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
node esbuild.mjs --tests
node out/test/bench/relay.bench.js
node test/bench/ui.bench.mjs
