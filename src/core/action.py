# Bot Screen action runner: carries out one agent action (its argv) inside the sandbox so that the
# extension can stop it at once when a person takes control, in the sandbox itself and not only
# its exec client. Runs as `python3 -c <this> ACTION_ARGV...` with the screen's DISPLAY.
# The action runs in a process group of its own. Any byte on stdin, or its end (the extension
# closed it, or the exec client died), kills that whole group with SIGKILL at once. A killed
# xdotool may leave a key down (the X server then auto-repeats it into the person's window) or a
# button held, so every key and button down on the screen is then released through XTest.
# Exit status: the action's own (128+N for signal N), or 124 when it was stopped.
import ctypes, os, signal, subprocess, sys, threading

STOPPED = 124


def release_all():
    """Releases every key down on the screen, and the buttons 1-5 XTest can release."""
    try:
        x11 = ctypes.CDLL("libX11.so.6")
        xtst = ctypes.CDLL("libXtst.so.6")
    except OSError:
        return
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XQueryKeymap.argtypes = [ctypes.c_void_p, ctypes.c_char * 32]
    x11.XDefaultRootWindow.restype = ctypes.c_ulong
    x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
    ptr = ctypes.POINTER
    x11.XQueryPointer.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ptr(ctypes.c_ulong), ptr(ctypes.c_ulong)] + \
        [ptr(ctypes.c_int)] * 4 + [ptr(ctypes.c_uint)]
    x11.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    xtst.XTestFakeKeyEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]
    xtst.XTestFakeButtonEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]
    display = x11.XOpenDisplay(None)
    if not display:
        return
    keys = (ctypes.c_char * 32)()
    x11.XQueryKeymap(display, keys)
    for code in range(8, 256):
        if keys.raw[code // 8] >> (code % 8) & 1:
            xtst.XTestFakeKeyEvent(display, code, 0, 0)
    window, child = ctypes.c_ulong(), ctypes.c_ulong()
    xy = [ctypes.c_int() for _ in range(4)]
    mask = ctypes.c_uint()
    if x11.XQueryPointer(display, x11.XDefaultRootWindow(display), ctypes.byref(window), ctypes.byref(child),
                         *[ctypes.byref(v) for v in xy], ctypes.byref(mask)):
        for button in range(1, 6):
            if mask.value & (1 << (7 + button)):
                xtst.XTestFakeButtonEvent(display, button, 0, 0)
    x11.XSync(display, 0)
    x11.XCloseDisplay(display)


child = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, start_new_session=True)
lock = threading.Lock()
state = {"exited": False, "stopped": False}


def watch():
    try:
        os.read(0, 1)
    except OSError:
        pass
    with lock:
        # Never signal a group whose leader was reaped: its id may belong to someone else by now.
        if not state["exited"]:
            state["stopped"] = True
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


threading.Thread(target=watch, daemon=True).start()
# Wait without reaping, so the group id stays ours until the watcher can no longer use it.
os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
with lock:
    state["exited"] = True
code = child.wait()
if state["stopped"]:
    release_all()
    os._exit(STOPPED)
os._exit(code if code >= 0 else 128 - code)
