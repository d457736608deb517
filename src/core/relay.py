# Bot Screen relay: copies stdin to a unix socket and the socket to stdout, byte-exact.
# Runs inside the sandbox as `python3 -c <this> SOCKET_PATH` (or `... tcp HOST PORT`).
# recv_into a 1 MiB buffer plus os.write measured faster than recv(64K) plus flush.
import os, socket, sys, threading

if sys.argv[1] == "tcp":
    sock = socket.create_connection((sys.argv[2], int(sys.argv[3])))
else:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(sys.argv[1])
    except OSError as err:
        sys.stderr.write("botscreen relay: cannot connect to %s: %s\n" % (sys.argv[1], err))
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
