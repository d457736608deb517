# Test helper, run inside the sandbox on the screen: a plain X client with one window (title
# argv[1]) that appends a line per key press it receives to argv[2]:
#   <X server time of the press, ms> <keysym name, unshifted> <modifier state>
# The X server stamps events with CLOCK_MONOTONIC in ms (mod 2^32), the clock the host shares with
# its containers (one kernel): the time a key reached the screen, whatever this client's delay.
# Like most applications, the window closes on Ctrl+W (the line is written first).
# With argv[1] == "--state" it prints the modifier/button mask and the keycodes down, and exits.
import ctypes, sys

x = ctypes.CDLL("libX11.so.6")
x.XOpenDisplay.restype = ctypes.c_void_p
x.XOpenDisplay.argtypes = [ctypes.c_char_p]
x.XDefaultRootWindow.restype = ctypes.c_ulong
x.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
x.XCreateSimpleWindow.restype = ctypes.c_ulong
x.XCreateSimpleWindow.argtypes = [ctypes.c_void_p, ctypes.c_ulong] + [ctypes.c_int] * 2 + [ctypes.c_uint] * 3 + [ctypes.c_ulong] * 2
x.XStoreName.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_char_p]
x.XSelectInput.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_long]
x.XMapWindow.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
x.XFlush.argtypes = [ctypes.c_void_p]
x.XNextEvent.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
x.XLookupKeysym.restype = ctypes.c_ulong
x.XLookupKeysym.argtypes = [ctypes.c_void_p, ctypes.c_int]
x.XKeysymToString.restype = ctypes.c_char_p
x.XKeysymToString.argtypes = [ctypes.c_ulong]
x.XQueryKeymap.argtypes = [ctypes.c_void_p, ctypes.c_char * 32]
ptr = ctypes.POINTER
x.XQueryPointer.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ptr(ctypes.c_ulong), ptr(ctypes.c_ulong)] + [ptr(ctypes.c_int)] * 4 + [ptr(ctypes.c_uint)]


class XKeyEvent(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int), ("serial", ctypes.c_ulong), ("send_event", ctypes.c_int), ("display", ctypes.c_void_p),
        ("window", ctypes.c_ulong), ("root", ctypes.c_ulong), ("subwindow", ctypes.c_ulong), ("time", ctypes.c_ulong),
        ("x", ctypes.c_int), ("y", ctypes.c_int), ("x_root", ctypes.c_int), ("y_root", ctypes.c_int),
        ("state", ctypes.c_uint), ("keycode", ctypes.c_uint), ("same_screen", ctypes.c_int),
    ]


class XEvent(ctypes.Union):
    _fields_ = [("type", ctypes.c_int), ("xkey", XKeyEvent), ("pad", ctypes.c_long * 24)]


KEY_PRESS = 2
CONTROL_MASK = 1 << 2

display = x.XOpenDisplay(None)
if not display:
    sys.exit("cannot open the display")
root = x.XDefaultRootWindow(display)

if sys.argv[1] == "--state":
    keys = (ctypes.c_char * 32)()
    x.XQueryKeymap(display, keys)
    down = [code for code in range(256) if keys.raw[code // 8] >> (code % 8) & 1]
    window, child = ctypes.c_ulong(), ctypes.c_ulong()
    xy = [ctypes.c_int() for _ in range(4)]
    mask = ctypes.c_uint()
    x.XQueryPointer(display, root, ctypes.byref(window), ctypes.byref(child), *[ctypes.byref(v) for v in xy], ctypes.byref(mask))
    print(mask.value, " ".join(map(str, down)))
    sys.exit(0)

title, path = sys.argv[1], sys.argv[2]
window = x.XCreateSimpleWindow(display, root, 100, 100, 480, 240, 1, 0, 0xFFFFFF)
x.XStoreName(display, window, title.encode())
x.XSelectInput(display, window, 1)  # KeyPressMask
x.XMapWindow(display, window)
x.XFlush(display)
log = open(path, "a", buffering=1)
event = XEvent()
while True:
    x.XNextEvent(display, ctypes.byref(event))
    if event.type != KEY_PRESS:
        continue
    name = (x.XKeysymToString(x.XLookupKeysym(ctypes.byref(event.xkey), 0)) or b"?").decode()
    log.write("%d %s %d\n" % (event.xkey.time, name, event.xkey.state))
    if name == "w" and event.xkey.state & CONTROL_MASK:
        break
