#!/usr/bin/env bash
# Installs on this machine (the host) the desktop that the sandbox image carries,
# for the "gateway" placement, where the screen runs on the host itself:
# TigerVNC's Xvnc, the Xfce parts the launcher starts (no xfce4-session), a
# session bus, the X tools, xdotool and python3. Idempotent: installs only what
# is missing and runs apt-get update at most once.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

packages=(
	tigervnc-standalone-server tigervnc-tools
	xfwm4 xfce4-panel xfdesktop4 xfce4-settings xfce4-terminal
	dbus dbus-x11 xauth x11-utils x11-xserver-utils xdotool
	python3 fonts-dejavu-core procps
)

need_apt "${packages[@]}"

for cmd in Xvnc xfwm4 xfce4-panel xfdesktop xfsettingsd dbus-run-session xauth xdpyinfo xdotool python3; do
	command -v "$cmd" >/dev/null 2>&1 || die "$cmd is missing after the install"
done
log "host desktop packages are installed"
