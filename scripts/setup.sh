#!/usr/bin/env bash
# Sets up everything Bot Screen needs on a fresh Debian machine, idempotently, with caches:
#   node dependencies, the Docker engine, the sandbox desktop image, the packaged extension,
#   and a real VS Code (VS Code Server 1.99.3 + Playwright's driver for Debian's Chromium).
#   --with-host-desktop also installs what the tests need on this machine: TigerVNC and Xfce
#   (gateway placement, and the SSH host), OpenSSH and Podman.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
source scripts/lib.sh

with_host_desktop=0
for arg in "$@"; do
	case $arg in
	--with-host-desktop) with_host_desktop=1 ;;
	*) die "unknown option $arg" ;;
	esac
done

start=$SECONDS
need_apt ca-certificates git python3 procps util-linux
# The benchmark's peer: a noVNC tab through websockify and socat (scripts/bench.sh).
need_apt websockify socat
# The flight recorder's test reads its WebM export with ffprobe (test/integration/recorder.test.ts).
need_apt ffmpeg
command -v node >/dev/null || need_apt nodejs npm

# npm ci only when the lock file changed since the last install.
ensure_cache
lock_hash=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -d node_modules ] || [ "$(cat node_modules/.botscreen-lock 2>/dev/null)" != "$lock_hash" ]; then
	log "npm ci"
	npm ci --no-audit --no-fund --loglevel=error
	echo "$lock_hash" >node_modules/.botscreen-lock
fi

bash scripts/start-dockerd.sh
bash scripts/build-sandbox-image.sh >/dev/null
if [ "$with_host_desktop" = 1 ]; then
	bash scripts/setup-host-desktop.sh
	# The external viewer port's test runs TigerVNC's own viewer on an X display here and reads
	# that display's clipboard (test/integration/viewer-listener.test.ts).
	need_apt tigervnc-viewer xclip
	bash scripts/setup-sshd-deps.sh
fi
bash scripts/install-test-vscode.sh >/dev/null

log "packaging the extension"
npm run --silent package >"$BOTSCREEN_CACHE/package.log" 2>&1 || {
	tail -n 30 "$BOTSCREEN_CACHE/package.log" >&2
	die "packaging failed"
}
log "ready in $(since "$start")"
