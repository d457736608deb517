#!/usr/bin/env bash
# Builds the Bot Screen desktop sandbox image for the test rig from the same context the
# extension ships (sandbox/), tags it with the same content-hash tag the extension uses by
# default (bot-screen-sandbox:<hash>, from scripts/sandbox-context.mjs), and prints its
# image id on stdout. The build arguments and labels are the extension's
# (src/core/sandboxImage.ts buildCommand), so a build from the extension hits this one's cache.
#
#   BOTSCREEN_IMAGE        an extra alias tag for the rig (default botscreen/sandbox:desktop;
#                          empty: none)
#   BOTSCREEN_BASE_IMAGE   base image to build FROM; when unset, a local Debian
#                          bookworm base is made with debootstrap and
#                          `docker import`ed as local/bookworm:minbase (for
#                          machines that reach Debian's mirror but no registry)
#   BOTSCREEN_DEBIAN_MIRROR, BOTSCREEN_DEBIAN_SECURITY_MIRROR
#                          Debian mirrors (default deb.debian.org)
#   BOTSCREEN_CACHE        cache folder (default ~/.cache/botscreen)
#
# The build is skipped when the image exists and its labels record the same
# context hash (dev.botscreen.context) and base (dev.botscreen.base).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

root="$(cd "$here/.." && pwd)"
context="$root/sandbox"
dockerfile="$context/Dockerfile"
alias="${BOTSCREEN_IMAGE-botscreen/sandbox:desktop}"
mirror="${BOTSCREEN_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
security_mirror="${BOTSCREEN_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
local_base="local/bookworm:minbase"
base="${BOTSCREEN_BASE_IMAGE:-$local_base}"

# The legacy builder: no buildx on these machines, and with a buildx
# docker-container driver FROM local/... would not resolve.
export DOCKER_BUILDKIT=0

[ -r "$dockerfile" ] || die "missing $dockerfile"

"$here/start-dockerd.sh"
ensure_cache

# One build at a time per cache; a second caller then finds the image up to date.
exec 9>"$BOTSCREEN_CACHE/build.lock"
flock 9

hash="$(node "$here/sandbox-context.mjs" --hash)"
image="$(node "$here/sandbox-context.mjs")"

label_of() {
	docker image inspect -f "{{ index .Config.Labels \"$2\" }}" "$1" 2>/dev/null || true
}

print_id() {
	docker image inspect -f '{{.Id}}' "$image"
}

tag_alias() {
	if [ -n "$alias" ]; then
		docker tag "$image" "$alias"
	fi
}

if [ "$(label_of "$image" dev.botscreen.context)" = "$hash" ] &&
	[ "$(label_of "$image" dev.botscreen.base)" = "$base" ]; then
	log "$image is up to date"
	tag_alias
	print_id
	exit 0
fi

# A Debian bookworm minbase root filesystem, kept as a tarball in the cache
# (without downloaded .debs and apt lists), imported when the image is missing.
make_local_base() {
	if docker image inspect "$local_base" >/dev/null 2>&1; then
		return 0
	fi
	local tarball="$BOTSCREEN_CACHE/bookworm-minbase.tar"
	local t0=$SECONDS
	if [ ! -s "$tarball" ]; then
		[ "$(id -u)" -eq 0 ] || die "debootstrap needs root"
		need_apt debootstrap
		local rootfs="$BOTSCREEN_CACHE/bookworm-minbase.rootfs"
		local dlog="$BOTSCREEN_CACHE/debootstrap.log"
		# --one-file-system: never follow a mount a failed debootstrap left behind.
		rm -rf --one-file-system "$rootfs"
		log "debootstrap bookworm minbase from $mirror (log: $dlog)"
		if ! debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$dlog" 2>&1; then
			tail -n 20 "$dlog" >&2
			die "debootstrap failed (log: $dlog)"
		fi
		log "packing the root filesystem into $tarball"
		tar --numeric-owner -C "$rootfs" \
			--exclude='./var/cache/apt/archives/*.deb' \
			--exclude='./var/cache/apt/*.bin' \
			--exclude='./var/lib/apt/lists/*_*' \
			--exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' \
			-cf "$tarball.tmp" .
		mv "$tarball.tmp" "$tarball"
		rm -rf --one-file-system "$rootfs"
	fi
	log "importing $local_base"
	docker import \
		--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		--change 'CMD ["bash"]' \
		"$tarball" "$local_base" >/dev/null
	log "base $local_base ready ($(since "$t0"))"
}

if [ "$base" = "$local_base" ]; then
	make_local_base
fi

blog="$BOTSCREEN_CACHE/build.log"
log "building $image FROM $base (log: $blog)"
t0=$SECONDS
if ! docker build --force-rm \
	--build-arg "BASE_IMAGE=$base" \
	--build-arg "DEBIAN_MIRROR=$mirror" \
	--build-arg "DEBIAN_SECURITY_MIRROR=$security_mirror" \
	--label "dev.botscreen.base=$base" \
	--label "dev.botscreen.context=$hash" \
	-t "$image" \
	--file "$dockerfile" \
	-- "$context" >"$blog" 2>&1; then
	tail -n 30 "$blog" >&2
	die "docker build failed (log: $blog)"
fi
log "built $image ($(since "$t0"))"
tag_alias

# The image this tag named before is now untagged; drop it (only ours).
docker image prune -f --filter label=dev.botscreen.image=desktop >/dev/null 2>&1 || true

print_id
