#!/usr/bin/env bash
# The main job: sets up everything, then opens a real VS Code (VS Code Server 1.99.3 in your
# browser, at the printed localhost URL) with Bot Screen installed and the screen started in
# the Docker sandbox. Ctrl+C ends it and removes the sandbox container it created.
#   --check   headless: open the window in Chromium, wait for the desktop, save
#             test-output/run-check.png, then end (what CI-like machines can do)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec node scripts/run.mjs "$@"
