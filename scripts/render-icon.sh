#!/usr/bin/env bash
# Renders the marketplace icon media/icon.png (128x128, transparent corners) from media/icon.svg
# with Debian's headless Chromium. Run after editing the SVG; the PNG is committed.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '<html><body style="margin:0"><img src="file://%s/media/icon.svg" width="128" height="128"></body></html>' "$PWD" >"$tmp/index.html"
chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
	--no-first-run --disable-sync --hide-scrollbars --default-background-color=00000000 \
	--window-size=128,128 --user-data-dir="$tmp/profile" --screenshot="$PWD/media/icon.png" "file://$tmp/index.html" 2>/dev/null
echo "media/icon.png written"
