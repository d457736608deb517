# Bot Screen relay: copies stdin to a unix socket and the socket to stdout, byte-exact.
# Runs inside the sandbox as `python3 -c <this> SOCKET_PATH` (or `... tcp HOST PORT`).
# `python3 -c <this> mux SOCKET_PATH` carries several connections to the socket over one exec
# (src/core/relayMux.ts): the flight recorder starts a new connection every segment, and a
# `docker exec` per segment cost the extension host a process spawn and the CLI's start each time.
# recv_into a 1 MiB buffer plus os.write measured faster than recv(64K) plus flush.
import os, socket, stat, struct, sys, threading

class Refused(Exception):
    pass

def refuse(path, why):
    raise Refused("botscreen relay: refusing %s: %s" % (path, why))

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
        sock.close()
        raise Refused("botscreen relay: cannot connect to %s: %s" % (path, err))
    peercred = getattr(socket, "SO_PEERCRED", None)  # Linux; elsewhere the path checks stand
    creds = peercred and sock.getsockopt(socket.SOL_SOCKET, peercred, struct.calcsize("3i"))
    if creds and struct.unpack("3i", creds)[1] != uid:
        sock.close()
        refuse(path, "its server does not run as uid %d" % uid)
    return sock

def connect(args):
    if args[0] == "tcp":
        return socket.create_connection((args[1], int(args[2])))
    return connect_private(args[0])

def read_exact(n):
    """n bytes of stdin, or None at its end."""
    parts = []
    while n > 0:
        data = os.read(0, n)
        if not data:
            return None
        parts.append(data)
        n -= len(data)
    return b"".join(parts)

def received(sock):
    """What the socket sends until it hangs up, each read a view of one reused buffer."""
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    while True:
        n = sock.recv_into(buf)
        if not n:
            return
        yield view[:n]

def write_all(data):
    view = memoryview(data)
    done = 0
    while done < len(view):
        done += os.write(1, view[done:])

# The mux's frames, both ways: op u8, connection id u32, payload length u32 (big-endian), payload.
OPEN, DATA, CLOSE, END, EOF = 1, 2, 3, 4, 5
FRAME = struct.Struct(">BII")

def mux(args):
    out = threading.Lock()
    conns = {}

    def send(op, cid, payload=b""):
        with out:
            write_all(FRAME.pack(op, cid, len(payload)))
            if payload:
                write_all(payload)

    def downstream(cid, sock):
        # END carries the code the plain relay would have exited with (0: the server hung up).
        try:
            for data in received(sock):
                send(DATA, cid, data)
            if conns.pop(cid, None) is not None:
                send(END, cid, b"\0")
        except OSError:
            pass  # closed by the owner (CLOSE), or the owner is gone

    while True:
        head = read_exact(FRAME.size)
        if head is None:
            break
        op, cid, length = FRAME.unpack(head)
        payload = read_exact(length) if length else b""
        if payload is None:
            break
        if op == OPEN:
            try:
                sock = connect(args)
            except (Refused, OSError) as err:
                send(END, cid, b"\2" + str(err).encode("utf-8", "replace"))
                continue
            conns[cid] = sock
            threading.Thread(target=downstream, args=(cid, sock), daemon=True).start()
        elif op == DATA:
            sock = conns.get(cid)
            if sock is not None:
                try:
                    sock.sendall(payload)
                except OSError:
                    pass
        elif op == EOF:
            sock = conns.get(cid)
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
        elif op == CLOSE:
            sock = conns.pop(cid, None)
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()
    # stdin ended: the owner is gone, and every connection with it.

def single(args):
    try:
        sock = connect(args)
    except Refused as err:
        sys.stderr.write("%s\n" % err)
        sys.exit(2)

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
    try:
        for data in received(sock):
            write_all(data)
    except (BrokenPipeError, ConnectionResetError):
        pass

try:
    if sys.argv[1] == "mux":
        mux(sys.argv[2:])
    else:
        single(sys.argv[1:])
except BrokenPipeError:
    pass
