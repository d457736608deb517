#!/usr/bin/env bash
# Sets up everything (idempotently, with caches) and runs every test against real parts:
# unit tests of the core, integration tests against the real Docker engine and desktop image,
# and UI tests in a real VS Code driven through Chromium. Artifacts go to test-output/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --with-host-desktop
echo "typecheck" >&2
npm run --silent typecheck
echo "lint (import cycles, copied blocks)" >&2
npm run --silent lint
node esbuild.mjs --tests
mkdir -p test-output
node --test --test-concurrency=1 \
	out/test/unit/*.test.js \
	out/test/integration/*.test.js \
	test/ui/*.test.mjs
