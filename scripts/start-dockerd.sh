#!/usr/bin/env bash
# Makes sure a Docker engine answers on the default socket (/var/run/docker.sock).
# Installs Debian's docker.io when dockerd is missing; starts dockerd in the
# background when `docker info` fails and waits (up to 60 s) until it answers.
# Safe to run repeatedly and while dockerd is already running. Silent on success
# when there is nothing to do.
#
# dockerd's log and pidfile: $BOTSCREEN_CACHE/dockerd.log, $BOTSCREEN_CACHE/dockerd.pid
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

# dockerd lives in /usr/sbin, which is not on every user's PATH.
PATH="$PATH:/usr/sbin:/sbin"

docker_ok() {
	docker info >/dev/null 2>&1
}

if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker >/dev/null 2>&1; then
	need_apt docker.io
fi
command -v dockerd >/dev/null 2>&1 || die "dockerd not found after installing docker.io"

if docker_ok; then
	exit 0
fi

[ "$(id -u)" -eq 0 ] || die "docker is not answering and starting dockerd needs root"

ensure_cache
dlog="$BOTSCREEN_CACHE/dockerd.log"
pidfile="$BOTSCREEN_CACHE/dockerd.pid"

# One starter at a time; whoever waited on the lock finds dockerd already up.
exec 9>"$BOTSCREEN_CACHE/dockerd.lock"
flock 9
if docker_ok; then
	exit 0
fi

is_dockerd() {
	[ -n "${1:-}" ] && [ -r "/proc/$1/comm" ] && [ "$(cat "/proc/$1/comm" 2>/dev/null)" = dockerd ]
}

pid="$(cat "$pidfile" 2>/dev/null || true)"
if is_dockerd "$pid"; then
	log "dockerd (pid $pid) is running but not answering yet; waiting"
else
	log "starting dockerd (log: $dlog)"
	# setsid: its own session, so it outlives this shell and the terminal.
	# 9>&-: the background daemon must not keep the start lock.
	setsid dockerd >>"$dlog" 2>&1 </dev/null 9>&- &
	pid=$!
	echo "$pid" >"$pidfile"
fi

start=$SECONDS
until docker_ok; do
	if ! kill -0 "$pid" 2>/dev/null; then
		tail -n 20 "$dlog" >&2
		die "dockerd exited (log: $dlog)"
	fi
	if [ $((SECONDS - start)) -ge 60 ]; then
		tail -n 20 "$dlog" >&2
		die "dockerd did not answer within 60 s (log: $dlog)"
	fi
	sleep 0.5
done

# dockerd's own pidfile names the daemon (the pid above may be setsid's).
if [ -r /var/run/docker.pid ]; then
	cat /var/run/docker.pid >"$pidfile"
fi
log "dockerd is ready ($(since "$start"))"
