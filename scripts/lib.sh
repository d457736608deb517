# shellcheck shell=bash
# Shared helpers for the Bot Screen scripts. Source this file; do not run it.
#
#   log MESSAGE...      one progress line on stderr, prefixed with the script's name
#   die MESSAGE...      log an error and exit 1
#   as_root CMD...      run CMD as root (directly when root, else through sudo)
#   pkg_installed PKG   true when the Debian package PKG is installed
#   need_apt PKG...     install the packages that are not installed yet
#   since SECONDS0      "12 s": elapsed time since a saved $SECONDS value
#
# Everything a script keeps between runs goes under $BOTSCREEN_CACHE.

BOTSCREEN_CACHE="${BOTSCREEN_CACHE:-$HOME/.cache/botscreen}"
export BOTSCREEN_CACHE

log() {
	printf '%s: %s\n' "${0##*/}" "$*" >&2
}

die() {
	log "error: $*"
	exit 1
}

since() {
	printf '%s s' "$((SECONDS - $1))"
}

ensure_cache() {
	mkdir -p "$BOTSCREEN_CACHE"
}

as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		die "need root (or sudo) to run: $*"
	fi
}

pkg_installed() {
	local status
	# shellcheck disable=SC2016 # ${db:Status-Abbrev} is a dpkg-query field, not a shell expansion
	status="$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null || true)"
	[ "$status" = "ii " ]
}

# Runs "apt-get update" at most once per run: the flag is exported, so scripts
# started by this one skip it too. apt's output goes to $BOTSCREEN_CACHE/apt.log.
need_apt() {
	local pkg missing=()
	for pkg in "$@"; do
		pkg_installed "$pkg" || missing+=("$pkg")
	done
	if [ "${#missing[@]}" -eq 0 ]; then
		return 0
	fi
	ensure_cache
	local aptlog="$BOTSCREEN_CACHE/apt.log"
	local apt_opts=(-q -o DPkg::Lock::Timeout=300)
	if [ -z "${BOTSCREEN_APT_UPDATED:-}" ]; then
		log "apt-get update (log: $aptlog)"
		if ! as_root apt-get "${apt_opts[@]}" update >>"$aptlog" 2>&1; then
			tail -n 20 "$aptlog" >&2
			die "apt-get update failed (log: $aptlog)"
		fi
		BOTSCREEN_APT_UPDATED=1
		export BOTSCREEN_APT_UPDATED
	fi
	log "installing ${missing[*]}"
	if ! as_root env DEBIAN_FRONTEND=noninteractive \
		apt-get "${apt_opts[@]}" install -y --no-install-recommends "${missing[@]}" >>"$aptlog" 2>&1; then
		tail -n 20 "$aptlog" >&2
		die "apt-get install failed (log: $aptlog)"
	fi
}
