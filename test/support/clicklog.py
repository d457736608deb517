# Test helper, run inside the sandbox on the screen: a plain X client with one window of a solid
# colour (argv[1], hex RRGGBB, so a screenshot can find it) at argv[2],argv[3] of size
# argv[4]xargv[5], that appends a line per pointer button press it receives to argv[6]:
#   <button> <x on the screen> <y on the screen>
# Override-redirect, so no window manager moves, decorates or refuses it.
import ctypes, sys

x = ctypes.CDLL("libX11.so.6")
x.XOpenDisplay.restype = ctypes.c_void_p
x.XOpenDisplay.argtypes = [ctypes.c_char_p]
x.XDefaultRootWindow.restype = ctypes.c_ulong
x.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
x.XCreateSimpleWindow.restype = ctypes.c_ulong
x.XCreateSimpleWindow.argtypes = [ctypes.c_void_p, ctypes.c_ulong] + [ctypes.c_int] * 2 + [ctypes.c_uint] * 3 + [ctypes.c_ulong] * 2
x.XSelectInput.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_long]
x.XMapRaised.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
x.XFlush.argtypes = [ctypes.c_void_p]
x.XNextEvent.argtypes = [ctypes.c_void_p, ctypes.c_void_p]


class XSetWindowAttributes(ctypes.Structure):
    _fields_ = [
        ("background_pixmap", ctypes.c_ulong), ("background_pixel", ctypes.c_ulong), ("border_pixmap", ctypes.c_ulong),
        ("border_pixel", ctypes.c_ulong), ("bit_gravity", ctypes.c_int), ("win_gravity", ctypes.c_int),
        ("backing_store", ctypes.c_int), ("backing_planes", ctypes.c_ulong), ("backing_pixel", ctypes.c_ulong),
        ("save_under", ctypes.c_int), ("event_mask", ctypes.c_long), ("do_not_propagate_mask", ctypes.c_long),
        ("override_redirect", ctypes.c_int), ("colormap", ctypes.c_ulong), ("cursor", ctypes.c_ulong),
    ]


class XButtonEvent(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int), ("serial", ctypes.c_ulong), ("send_event", ctypes.c_int), ("display", ctypes.c_void_p),
        ("window", ctypes.c_ulong), ("root", ctypes.c_ulong), ("subwindow", ctypes.c_ulong), ("time", ctypes.c_ulong),
        ("x", ctypes.c_int), ("y", ctypes.c_int), ("x_root", ctypes.c_int), ("y_root", ctypes.c_int),
        ("state", ctypes.c_uint), ("button", ctypes.c_uint), ("same_screen", ctypes.c_int),
    ]


class XEvent(ctypes.Union):
    _fields_ = [("type", ctypes.c_int), ("xbutton", XButtonEvent), ("pad", ctypes.c_long * 24)]


x.XChangeWindowAttributes.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong, ctypes.POINTER(XSetWindowAttributes)]

BUTTON_PRESS = 4
CW_OVERRIDE_REDIRECT = 1 << 9

colour = int(sys.argv[1], 16)
left, top, width, height = (int(v) for v in sys.argv[2:6])
path = sys.argv[6]
display = x.XOpenDisplay(None)
if not display:
    sys.exit("cannot open the display")
window = x.XCreateSimpleWindow(display, x.XDefaultRootWindow(display), left, top, width, height, 0, 0, colour)
attributes = XSetWindowAttributes()
attributes.override_redirect = 1
x.XChangeWindowAttributes(display, window, CW_OVERRIDE_REDIRECT, ctypes.byref(attributes))
x.XSelectInput(display, window, 1 << 2)  # ButtonPressMask
x.XMapRaised(display, window)
x.XFlush(display)
log = open(path, "a", buffering=1)
log.write("mapped\n")
event = XEvent()
while True:
    x.XNextEvent(display, ctypes.byref(event))
    if event.type == BUTTON_PRESS:
        log.write("%d %d %d\n" % (event.xbutton.button, event.xbutton.x_root, event.xbutton.y_root))
