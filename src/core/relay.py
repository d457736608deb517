# Bot Screen relay: copies stdin to a unix socket and the socket to stdout, byte-exact.
# Runs inside the sandbox as `python3 -c <this> SOCKET_PATH` (or `... tcp HOST PORT`).
# recv_into a 1 MiB buffer plus os.write measured faster than recv(64K) plus flush.
import os, socket, stat, struct, sys, threading

def refuse(path, why):
    sys.stderr.write("botscreen relay: refusing %s: %s\n" % (path, why))
    sys.exit(2)

# The screen's socket must be ours, reached through no symlink and through directories that
# only root or we can rename entries of: another user must never be able to slip their own
# socket in and receive the RFB stream and the keys typed. Checked before connecting (they see
# no connection), and the connected peer's uid once more (SO_PEERCRED) before any byte is sent.
def connect_private(path):
    uid = os.getuid()
    if not path.startswith("/"):
        refuse(path, "not an absolute path")
    prefix = ""
    parts = path.split("/")[1:]
    for i, part in enumerate(parts):
        prefix += "/" + part
        try:
            st = os.lstat(prefix)
        except OSError as err:
            refuse(path, err)
        last = i == len(parts) - 1
        if stat.S_ISLNK(st.st_mode):
            refuse(path, "%s is a symlink" % prefix)
        if last:
            if not stat.S_ISSOCK(st.st_mode) or st.st_uid != uid:
                refuse(path, "not a socket of uid %d" % uid)
        elif (not stat.S_ISDIR(st.st_mode) or st.st_uid not in (0, uid)
              or (st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX)):
            refuse(path, "%s is not private to uid %d" % (prefix, uid))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError as err:
        sys.stderr.write("botscreen relay: cannot connect to %s: %s\n" % (path, err))
        sys.exit(2)
    peercred = getattr(socket, "SO_PEERCRED", None)  # Linux; elsewhere the path checks stand
    creds = peercred and sock.getsockopt(socket.SOL_SOCKET, peercred, struct.calcsize("3i"))
    if creds and struct.unpack("3i", creds)[1] != uid:
        sock.close()
        refuse(path, "its server does not run as uid %d" % uid)
    return sock

if sys.argv[1] == "tcp":
    sock = socket.create_connection((sys.argv[2], int(sys.argv[3])))
else:
    sock = connect_private(sys.argv[1])

def upstream():
    while True:
        data = os.read(0, 65536)
        if not data:
            break
        sock.sendall(data)
    try:
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass

threading.Thread(target=upstream, daemon=True).start()
buf = bytearray(1 << 20)
view = memoryview(buf)
try:
    while True:
        n = sock.recv_into(buf)
        if not n:
            break
        done = 0
        while done < n:
            done += os.write(1, view[done:n])
except (BrokenPipeError, ConnectionResetError):
    pass
