#!/usr/bin/env bash
# Installs what the UI tests (test/ui/) need, outside the repository:
#   - Debian packages (only the missing ones; `apt-get update` at most once),
#   - a real VS Code Server 1.99.3, taken from the npm package code-server@4.99.4,
#     into $BOTSCREEN_CACHE/vscode-server (see shared recipe real-vscode-tests.md),
#   - playwright-core (no browser download; the tests use Debian's chromium)
#     into $BOTSCREEN_CACHE/harness/node_modules.
# Idempotent: each part writes a stamp when complete, and a later run with the
# stamps present does nothing. An incomplete install (no stamp) is redone from scratch.
# Prints the server entry (…/lib/vscode/out/server-main.js) on its last line.
set -euo pipefail

CODE_SERVER_VERSION=4.99.4          # bundles VS Code Server 1.99.3; later releases want Node 24
PLAYWRIGHT_CORE_VERSION=1.65.1      # checked against Debian's chromium 156
APT_PACKAGES=(ripgrep libkrb5-dev libsecret-1-dev libx11-dev libxkbfile-dev chromium
              python3 make g++)     # the last three: node-gyp's toolchain, usually present
NATIVE_MODULES=(node-pty @vscode/spdlog @parcel/watcher native-watchdog)

CACHE="${BOTSCREEN_CACHE:-$HOME/.cache/botscreen}"
SERVER_DIR="$CACHE/vscode-server"
VSCODE_DIR="$SERVER_DIR/node_modules/code-server/lib/vscode"
SERVER_MAIN="$VSCODE_DIR/out/server-main.js"
SERVER_STAMP="$SERVER_DIR/.complete-code-server-$CODE_SERVER_VERSION"
HARNESS_DIR="$CACHE/harness"
HARNESS_STAMP="$HARNESS_DIR/.complete-playwright-core-$PLAYWRIGHT_CORE_VERSION"

log() { printf '[install-test-vscode] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
NPM_FLAGS=(--no-audit --no-fund --loglevel=error)

mkdir -p "$CACHE"
# Two test runs starting together must not install into the same folder at once.
exec 9>"$CACHE/.install.lock"
flock 9

# ---- 1. Debian packages ------------------------------------------------------
install_apt_packages() {
  local missing=() p
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "missing Debian packages (${missing[*]}) and not root"
    sudo=(sudo)
  fi
  log "apt: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >&2
}

# ---- 2-7. VS Code Server from code-server ------------------------------------
install_server() {
  [ -f "$SERVER_STAMP" ] && [ -f "$SERVER_MAIN" ] && return 0
  local t0=$SECONDS
  log "installing code-server@$CODE_SERVER_VERSION into $SERVER_DIR"
  rm -rf "$SERVER_DIR"
  mkdir -p "$SERVER_DIR"
  # A package.json of our own keeps npm from walking up to some parent project.
  printf '{ "name": "botscreen-test-vscode", "private": true }\n' >"$SERVER_DIR/package.json"

  # 2. Its postinstall cannot work here (kerberos without headers, ripgrep from GitHub).
  (cd "$SERVER_DIR" && npm install "${NPM_FLAGS[@]}" --ignore-scripts "code-server@$CODE_SERVER_VERSION" >&2)
  [ -d "$VSCODE_DIR" ] || die "no $VSCODE_DIR after npm install"

  # 3. The VS Code Server's own dependencies.
  log "npm install in lib/vscode"
  (cd "$VSCODE_DIR" && npm install "${NPM_FLAGS[@]}" --omit=dev --ignore-scripts >&2)

  # 4. Native modules. --nodedir: without it node-gyp downloads Node headers (no internet).
  local node_gyp nodedir m
  node_gyp="$(npm root -g)/npm/node_modules/node-gyp/bin/node-gyp.js"
  [ -f "$node_gyp" ] || die "npm's node-gyp not found at $node_gyp"
  nodedir="${BOTSCREEN_NODEDIR:-$(node -p 'require("path").resolve(process.execPath, "../..")')}"
  [ -f "$nodedir/include/node/node_version.h" ] \
    || die "no Node headers under $nodedir/include/node (set BOTSCREEN_NODEDIR)"
  for m in "${NATIVE_MODULES[@]}"; do
    [ -d "$VSCODE_DIR/node_modules/$m" ] || die "native module $m missing from lib/vscode/node_modules"
    log "node-gyp rebuild $m"
    (cd "$VSCODE_DIR/node_modules/$m" \
      && node "$node_gyp" rebuild --nodedir="$nodedir" --jobs="$(nproc)" >"$SERVER_DIR/node-gyp-${m//\//_}.log" 2>&1) \
      || { tail -n 40 "$SERVER_DIR/node-gyp-${m//\//_}.log" >&2; die "node-gyp failed for $m"; }
  done

  # 5. Debian's ripgrep instead of the GitHub download.
  mkdir -p "$VSCODE_DIR/node_modules/@vscode/ripgrep/bin"
  cp "$(command -v rg)" "$VSCODE_DIR/node_modules/@vscode/ripgrep/bin/rg"

  # 6. The server loads some modules through node_modules.asar.
  ln -sfn node_modules "$VSCODE_DIR/node_modules.asar"

  # 7. Built-in extensions' dependencies.
  log "npm install in lib/vscode/extensions"
  (cd "$VSCODE_DIR/extensions" && npm install "${NPM_FLAGS[@]}" --omit=dev --ignore-scripts >&2)

  [ -f "$SERVER_MAIN" ] || die "no $SERVER_MAIN after install"
  date -u +%FT%TZ >"$SERVER_STAMP"
  log "VS Code Server installed in $((SECONDS - t0)) s"
}

# ---- playwright-core for the test driver --------------------------------------
install_harness() {
  [ -f "$HARNESS_STAMP" ] && [ -f "$HARNESS_DIR/node_modules/playwright-core/package.json" ] && return 0
  local t0=$SECONDS
  log "installing playwright-core@$PLAYWRIGHT_CORE_VERSION into $HARNESS_DIR"
  rm -rf "$HARNESS_DIR"
  mkdir -p "$HARNESS_DIR"
  printf '{ "name": "botscreen-ui-harness", "private": true }\n' >"$HARNESS_DIR/package.json"
  (cd "$HARNESS_DIR" && npm install "${NPM_FLAGS[@]}" --ignore-scripts "playwright-core@$PLAYWRIGHT_CORE_VERSION" >&2)
  date -u +%FT%TZ >"$HARNESS_STAMP"
  log "playwright-core installed in $((SECONDS - t0)) s"
}

install_apt_packages
install_server
install_harness
echo "$SERVER_MAIN"
