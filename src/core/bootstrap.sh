# Bot Screen bootstrap: finds the user's private runtime dir, stores the launcher (arriving on
# stdin) there and runs it. It travels in argv as `bash -c BOOTSTRAP botscreen KEY MODE ...`.
#
# Another user of the machine can plant anything under a shared /tmp: a symlink to their own
# directory (flipped at will), a directory of their own, files inside it. So no path is trusted
# by name: each directory is entered with `cd -P` and then proven, on what was entered, to be
# ours and 0700, to be the very inode the requested name points at (no symlink at the last
# step), and to sit below directories that only root or we can rename entries of. The physical
# path found this way is the only one used and published afterwards. A name someone else holds
# is skipped for a fresh private directory, never an error the user cannot fix.
set -u
umask 077
uid=$EUID
key=${1:?key}
case $key in *[!A-Za-z0-9_-]* | '') echo "botscreen: bad key" >&2; exit 2 ;; esac

# Enters directory $1 and succeeds only when it is safe; leaves $here = its physical path.
enter_private() {
  local want=$1 p st i=0 paths dot
  cd -P -- "$want" 2>/dev/null || return 1
  here=$PWD # after cd -P: the physical path
  paths=("$here")
  p=$here
  while [ -n "$p" ]; do
    p=${p%/*}
    paths+=("${p:-/}")
  done
  # One stat (it never follows a final symlink): `.`, the requested name, then $here and every
  # directory above it.
  while read -r st; do
    set -- $st
    case $i in
      0) dot=$3 ;;
      1) [ "$3" = "$dot" ] || return 1 ;;
      2) [ "$1" = "$uid" ] && [ $((8#$2 & 8#7777)) -eq $((8#700)) ] && [ "$3" = "$dot" ] && [ "$4" = directory ] || return 1 ;;
      *)
        [ "$4" = directory ] || return 1
        [ "$1" = 0 ] || [ "$1" = "$uid" ] || return 1
        # Writable by others is fine only with the sticky bit (they cannot rename our entries).
        [ $((8#$2 & 8#022)) -eq 0 ] || [ $((8#$2 & 8#1000)) -ne 0 ] || return 1
        ;;
    esac
    i=$((i + 1))
  done < <(stat -c '%u %a %d:%i %F' -- . "$want" "${paths[@]}" 2>/dev/null)
  [ "$i" -eq $((${#paths[@]} + 2)) ]
}

# A base named $1: created 0700 when absent (mkdir fails if anything holds the name).
private_base() {
  mkdir -m 0700 -- "$1" 2>/dev/null
  [ ! -L "$1" ] && enter_private "$1"
}

tmp=${TMPDIR:-/tmp}
case $tmp in /*) ;; *) tmp=/tmp ;; esac
xdg=${XDG_RUNTIME_DIR:-}
case $xdg in /*) ;; *) xdg= ;; esac
found=
if [ -n "$xdg" ] && private_base "$xdg/botscreen"; then
  found=1
elif private_base "$tmp/botscreen-$uid"; then
  found=1
else
  # The usual name is someone else's: a fresh dir of ours, found again by name on the next call
  # (no one else can make a directory owned by us).
  for d in "$tmp/botscreen-$uid".*; do
    if [ ! -L "$d" ] && [ -O "$d" ] && enter_private "$d"; then found=1; break; fi
  done
  if [ -z "$found" ]; then
    d=$(mktemp -d -- "$tmp/botscreen-$uid.XXXXXXXX") && enter_private "$d" && found=1
  fi
fi
[ -n "$found" ] || { echo "botscreen: no private runtime directory could be made under $tmp" >&2; exit 2; }
base=$here
mkdir -m 0700 -- "$base/$key" 2>/dev/null
[ ! -L "$base/$key" ] && enter_private "$base/$key" || { echo "botscreen: unsafe runtime dir $base/$key" >&2; exit 2; }
# Renamed into place: a running bash reads its script lazily, an in-place rewrite would corrupt
# the live supervisor.
cat >.launcher.new && mv -f -- .launcher.new launcher.sh || exit 2
exec bash "$here/launcher.sh" "$@"
