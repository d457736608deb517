#!/usr/bin/env bash
# Installs what the SSH, Podman and external-viewer tests need on this machine, idempotently:
#   - OpenSSH server and client (test/support/sshd.ts runs a throwaway sshd on 127.0.0.1;
#     Debian's policy-rc.d here keeps the package's own sshd from starting on :22),
#     and sshd's privilege separation directory /run/sshd;
#   - the desktop packages (scripts/setup-host-desktop.sh): over SSH the screen runs as the
#     login user on this machine, so this machine must carry TigerVNC and Xfce;
#   - Podman with catatonit (needed for `podman run --init`);
#   - zsh and mksh: the login shells besides bash and dash that the quoting test runs for real.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

# vncsnapshot: a VNC client from Debian, for the external-viewer test.
need_apt openssh-server openssh-client podman catatonit vncsnapshot zsh mksh
as_root mkdir -p /run/sshd
bash "$here/setup-host-desktop.sh"

for cmd in /usr/sbin/sshd ssh ssh-keygen podman /usr/libexec/podman/catatonit zsh mksh; do
	command -v "$cmd" >/dev/null 2>&1 || [ -x "$cmd" ] || die "$cmd is missing after the install"
done
log "sshd and podman test dependencies are installed"
