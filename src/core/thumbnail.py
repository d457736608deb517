# Grabs the X screen named by $DISPLAY (and $XAUTHORITY) for the Screens overview: the screen,
# shrunk to at most MAX_WIDTH pixels wide by taking every n-th pixel of every n-th row (the same
# n both ways, so the aspect stays), written to stdout as a line `WIDTH HEIGHT SMALL_W SMALL_H`
# and a line of its RGB pixels, zlib-compressed and base64. Read-only: one XGetImage, no input
# event, no file written. The JPEG is made by the extension host: Python's standard library has
# no JPEG encoder, and the sandbox image gets no extra package for it.
# argv: the source of screenshot.py (its grab() and exit codes are reused), MAX_WIDTH.
import base64
import sys
import zlib

grabber = {'__name__': 'botscreen_screenshot'}
exec(compile(sys.argv[1], 'screenshot.py', 'exec'), grabber)
max_width = int(sys.argv[2])
width, height, rgb = grabber['grab']()
step = max(1, -(-width // max_width))
small_width = -(-width // step)
small_height = -(-height // step)
out = bytearray(small_width * small_height * 3)
row_bytes = width * 3
for y in range(small_height):
    row = rgb[y * step * row_bytes:(y * step + 1) * row_bytes]
    start = y * small_width * 3
    for channel in range(3):
        # Channel `channel` of pixels 0, step, 2*step...: exactly small_width bytes.
        out[start + channel:start + small_width * 3:3] = row[channel::3 * step]
sys.stdout.write('%d %d %d %d\n' % (width, height, small_width, small_height))
sys.stdout.write(base64.b64encode(zlib.compress(bytes(out), 6)).decode('ascii'))
sys.stdout.write('\n')
