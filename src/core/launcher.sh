# Bot Screen launcher: the same script on this machine and inside every sandbox.
#
# It arrives on the exec stream's stdin (never in argv, which is capped at 128 KiB); the
# bootstrap (bootstrap.sh) proves the runtime dir private, stores the script there as
# launcher.sh and runs it from inside that dir (the working directory) as
#   launcher.sh KEY start GEOMETRY TIMEOUT_S   start or adopt the screen, print its env
#   launcher.sh KEY stop                      stop the screen's whole session
#   launcher.sh KEY status                    print the env of a live screen, else exit 1
#   launcher.sh KEY run DISPLAY GEOMETRY      (internal) the screen's supervisor
# Output of start/status is KEY=VALUE lines; exit 3 = missing binaries, 4 = did not come up.
set -u
umask 077

key=${1:?key}
mode=${2:?mode}
case $key in *[!A-Za-z0-9_-]* | '') echo "botscreen: bad key" >&2; exit 2 ;; esac
# The physical path the bootstrap entered and checked; the only one used and published.
cd -P . || exit 2
rdir=$PWD
[ "${rdir##*/}" = "$key" ] || { echo "botscreen: not in the runtime dir of $key" >&2; exit 2; }
base=${rdir%/*}

required="Xvnc xauth xdpyinfo xprop xsetroot dbus-run-session xfsettingsd xfwm4 xfdesktop xfce4-panel python3 setsid flock pkill"

# The launcher is alive when its pid is ours: same script path in its command line.
launcher_pid() {
  local pid
  pid=$(cat launcher.pid 2>/dev/null) || return 1
  case $pid in '' | *[!0-9]*) return 1 ;; esac
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$rdir/launcher.sh $key run" || return 1
  echo "$pid"
}

running() {
  launcher_pid >/dev/null && [ -S rfb.sock ] && [ -s env ]
}

print_env() {
  cat env
  echo "BOTSCREEN_PID=$(launcher_pid)"
  echo "BOTSCREEN_SOCKET=$rdir/rfb.sock"
  echo "BOTSCREEN_RUNTIME_DIR=$rdir"
  echo "BOTSCREEN_GEOMETRY=$(cat geometry 2>/dev/null)"
  echo "BOTSCREEN_ADOPTED=$1"
}

# Whether X display $1 is free for us. Locks and sockets of other users are skipped, never read
# (a lock can be a FIFO or a symlink) and never block the start: the next display is tried. A
# stale lock or socket of our own (its pid dead) is removed. A name someone listens on (an X
# server, or a squatter on the abstract socket that X clients try first) is taken.
display_free() {
  local lock=/tmp/.X$1-lock sock=/tmp/.X11-unix/X$1 pid
  case $listening in *" $sock "* | *" @$sock "*) return 1 ;; esac
  if [ -e "$lock" ] || [ -L "$lock" ]; then
    [ ! -L "$lock" ] && [ -f "$lock" ] && [ -O "$lock" ] || return 1
    pid=$(tr -dc '0-9' <"$lock" 2>/dev/null)
    if [ -n "$pid" ] && [ -d "/proc/$pid" ]; then return 1; fi
    rm -f "$lock" 2>/dev/null
  fi
  if [ -e "$sock" ] || [ -L "$sock" ]; then
    [ ! -L "$sock" ] && [ -O "$sock" ] || return 1
    rm -f "$sock" 2>/dev/null
  fi
  [ ! -e "$lock" ] && [ ! -L "$lock" ] && [ ! -e "$sock" ] && [ ! -L "$sock" ]
}

# The names of every bound unix socket (abstract ones start with @), for display_free.
read_listening() {
  listening=" $(awk 'NF >= 8 { printf "%s ", $8 }' /proc/net/unix 2>/dev/null)"
}

pick_display() {
  local n
  read_listening
  for n in $(seq 20 999); do
    if display_free "$n"; then echo ":$n"; return 0; fi
  done
  return 1
}

# Stops every process of the screen's session (the launcher is its session leader), then
# removes what the screen published. Tracking by session id also catches Chromium, which
# rewrites its own environment; SIGCONT un-sticks processes stopped after the bus vanished.
stop_screen() {
  local pid sid stopped=0 i
  pid=$(cat launcher.pid 2>/dev/null)
  case $pid in '' | *[!0-9]*) pid= ;; esac
  if [ -n "$pid" ]; then
    if launcher_pid >/dev/null || [ ! -d "/proc/$pid" ]; then sid=$pid; fi
  fi
  if [ -n "${sid:-}" ] && pgrep -s "$sid" >/dev/null 2>&1; then
    stopped=1
    pkill -CONT -s "$sid" 2>/dev/null
    pkill -TERM -s "$sid" 2>/dev/null
    for i in $(seq 1 30); do
      pgrep -s "$sid" >/dev/null 2>&1 || break
      sleep 0.1
    done
    pkill -KILL -s "$sid" 2>/dev/null
    for i in $(seq 1 20); do
      pgrep -s "$sid" >/dev/null 2>&1 || break
      sleep 0.1
    done
  fi
  local display
  display=$(sed -n 's/^DISPLAY=:\([0-9]*\)$/\1/p' env 2>/dev/null)
  rm -f rfb.sock env env.tmp launcher.pid
  [ -n "$display" ] && read_listening && display_free "$display"
  echo "BOTSCREEN_STOPPED=$stopped"
}

start_screen() {
  local geometry=${1:?geometry} timeout=${2:-20} missing="" b pid i display attempt
  if running; then print_env 1; return 0; fi
  for b in $required; do command -v "$b" >/dev/null 2>&1 || missing="$missing $b"; done
  if [ -n "$missing" ]; then echo "BOTSCREEN_MISSING=${missing# }"; return 3; fi
  stop_screen >/dev/null
  # One start at a time per user, so two screens never pick the same display.
  exec 9>"$base/.start.lock"
  flock -w 30 9 || { echo "botscreen: another start holds the lock" >&2; return 4; }
  # Someone else may take the display between the pick and Xvnc's own lock: then the next one.
  for attempt in 1 2 3; do
    display=$(pick_display) || { echo "botscreen: no free X display between :20 and :999" >&2; return 4; }
    echo "$geometry" >geometry
    rm -f launcher.pid
    # fd 9 (the lock) must not leak into the screen, or the next start would wait on it.
    setsid -f bash "$rdir/launcher.sh" "$key" run "$display" "$geometry" >launcher.log 2>&1 </dev/null 9>&-
    for i in $(seq 1 $((timeout * 10))); do
      if running; then print_env 0; return 0; fi
      pid=$(cat launcher.pid 2>/dev/null)
      if [ -n "$pid" ] && [ ! -d "/proc/$pid" ]; then break; fi
      sleep 0.1
    done
    grep -qE 'already active|Cannot establish any listening sockets' launcher.log || break
  done
  echo "botscreen: the screen did not come up within ${timeout}s; launcher log:" >&2
  tail -c 2000 launcher.log >&2
  stop_screen >/dev/null
  return 4
}

seed_config() {
  local xml="$XDG_CONFIG_HOME/xfce4/xfconf/xfce-perchannel-xml"
  mkdir -p "$xml" "$XDG_CACHE_HOME" "$XDG_DATA_HOME" "$XDG_RUNTIME_DIR"
  chmod 0700 "$XDG_RUNTIME_DIR"
  # A seeded panel skips the first-run dialog that would otherwise cover the desktop.
  if [ ! -e "$xml/xfce4-panel.xml" ] && [ -r /etc/xdg/xfce4/panel/default.xml ]; then
    cp /etc/xdg/xfce4/panel/default.xml "$xml/xfce4-panel.xml"
  fi
  [ -e "$xml/xfwm4.xml" ] || cat >"$xml/xfwm4.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<channel name="xfwm4" version="1.0">
  <property name="general" type="empty">
    <property name="use_compositing" type="bool" value="false"/>
    <property name="workspace_count" type="int" value="1"/>
  </property>
</channel>
XML
}

# The screen's supervisor: Xvnc on a 0600 unix socket (never TCP), a private D-Bus session and
# the Xfce components. It exits, taking the whole session with it, when the panel ends.
run_screen() {
  local display=${1:?display} geometry=${2:?geometry} xvnc i
  echo $$ >launcher.pid
  unset SESSION_MANAGER DBUS_SESSION_BUS_ADDRESS WAYLAND_DISPLAY
  export DISPLAY=$display XAUTHORITY="$rdir/Xauthority"
  export XDG_CONFIG_HOME="$rdir/xdg/config" XDG_CACHE_HOME="$rdir/xdg/cache"
  export XDG_DATA_HOME="$rdir/xdg/data" XDG_RUNTIME_DIR="$rdir/xdg/runtime"
  export XDG_SESSION_TYPE=x11 XDG_CURRENT_DESKTOP=XFCE GDK_BACKEND=x11 QT_QPA_PLATFORM=xcb
  export NO_AT_BRIDGE=1 GTK_A11Y=none LANG=${LANG:-C.UTF-8}
  seed_config
  : >"$XAUTHORITY"
  # The cookie goes through stdin, never argv (argv is world-readable in /proc).
  printf 'add %s . %s\n' "$display" "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')" | xauth -q -f "$XAUTHORITY" source -
  rm -f rfb.sock
  # No blacklist: every client of the unix socket is the same "host" to Xvnc, which marks a host
  # at each connection until it authenticates, so 5 viewers connecting at once (or 5 that left
  # before the handshake) would lock every viewer out. Who may connect is decided before the
  # socket (mode 0600, and the extension's own checks), and there is no password to guess.
  # Clipboard: what is copied (CLIPBOARD, not a mere selection: -SendPrimary=0) is announced to the
  # viewers; its text goes only to a viewer that asks, and the viewer's gate lets that ask through
  # only for the person in control (src/core/rfbInputGate.ts).
  Xvnc "$display" -geometry "$geometry" -depth 24 -dpi 96 \
    -rfbport -1 -rfbunixpath "$rdir/rfb.sock" -rfbunixmode 0600 -nolisten tcp \
    -SecurityTypes None -UseBlacklist=0 -AlwaysShared -AcceptSetDesktopSize -FrameRate 30 -SendPrimary=0 \
    -s 0 -desktop "Bot Screen" -auth "$XAUTHORITY" 2>&1 | grep -v --line-buffered 'Could not resolve keysym' &
  xvnc=$!
  trap 'trap "" TERM; rm -f "$rdir/env" "$rdir/rfb.sock"; pkill -TERM -s $$ 2>/dev/null' EXIT
  trap 'exit 143' TERM INT HUP
  for i in $(seq 1 100); do
    xdpyinfo >/dev/null 2>&1 && break
    kill -0 "$xvnc" 2>/dev/null || { echo "botscreen: Xvnc exited" >&2; exit 1; }
    sleep 0.1
  done
  xdpyinfo >/dev/null 2>&1 || { echo "botscreen: Xvnc did not answer within 10s" >&2; exit 1; }
  xsetroot -solid '#1c1f29'
  command -v xset >/dev/null && xset s off -dpms s noblank 2>/dev/null
  dbus-run-session -- bash -c '
    {
      echo "DISPLAY=$DISPLAY"
      echo "XAUTHORITY=$XAUTHORITY"
      echo "DBUS_SESSION_BUS_ADDRESS=$DBUS_SESSION_BUS_ADDRESS"
      echo "XDG_CONFIG_HOME=$XDG_CONFIG_HOME"
      echo "XDG_CACHE_HOME=$XDG_CACHE_HOME"
      echo "XDG_DATA_HOME=$XDG_DATA_HOME"
      echo "XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR"
    } >"$1/env.tmp" && mv -f "$1/env.tmp" "$1/env"
    xfsettingsd --sm-client-disable &
    xfwm4 --compositor=off --sm-client-disable &
    for i in $(seq 1 50); do
      xprop -root _NET_SUPPORTING_WM_CHECK 2>/dev/null | grep -q "window id" && break
      sleep 0.1
    done
    xfdesktop --disable-wm-check &
    exec xfce4-panel --sm-client-disable
  ' botscreen-session "$rdir"
}

case $mode in
  start) start_screen "${3:-1280x800}" "${4:-20}" ;;
  stop) stop_screen ;;
  status) if running; then print_env 1; else exit 1; fi ;;
  run) run_screen "${3:?display}" "${4:?geometry}" ;;
  *) echo "botscreen: unknown mode $mode" >&2; exit 2 ;;
esac
