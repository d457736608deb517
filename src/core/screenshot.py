# Grabs the X screen named by $DISPLAY (and $XAUTHORITY) and writes it to stdout as a base64 PNG.
# Only the standard library and libX11 (which every X desktop has): no Pillow, xwd or ImageMagick.
# Exit codes: 3 no display, 4 the grab failed, 5 an unsupported pixel format.
import base64
import ctypes
import struct
import sys
import zlib


class XImage(ctypes.Structure):
    # The leading fields of Xlib's XImage; only read through the pointer XGetImage returns.
    _fields_ = [
        ('width', ctypes.c_int), ('height', ctypes.c_int), ('xoffset', ctypes.c_int),
        ('format', ctypes.c_int), ('data', ctypes.c_void_p), ('byte_order', ctypes.c_int),
        ('bitmap_unit', ctypes.c_int), ('bitmap_bit_order', ctypes.c_int), ('bitmap_pad', ctypes.c_int),
        ('depth', ctypes.c_int), ('bytes_per_line', ctypes.c_int), ('bits_per_pixel', ctypes.c_int),
        ('red_mask', ctypes.c_ulong), ('green_mask', ctypes.c_ulong), ('blue_mask', ctypes.c_ulong),
    ]


def fail(code, message):
    sys.stderr.write('screenshot: %s\n' % message)
    sys.exit(code)


def shift_of(mask):
    return (mask & -mask).bit_length() - 1


def grab():
    try:
        x = ctypes.CDLL('libX11.so.6')
    except OSError as err:
        fail(3, 'libX11 is not available: %s' % err)
    x.XOpenDisplay.restype = ctypes.c_void_p
    x.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x.XDefaultScreen.argtypes = [ctypes.c_void_p]
    x.XRootWindow.restype = ctypes.c_ulong
    x.XRootWindow.argtypes = [ctypes.c_void_p, ctypes.c_int]
    x.XDisplayWidth.argtypes = [ctypes.c_void_p, ctypes.c_int]
    x.XDisplayHeight.argtypes = [ctypes.c_void_p, ctypes.c_int]
    x.XGetImage.restype = ctypes.POINTER(XImage)
    x.XGetImage.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int,
                            ctypes.c_uint, ctypes.c_uint, ctypes.c_ulong, ctypes.c_int]
    x.XCloseDisplay.argtypes = [ctypes.c_void_p]
    display = x.XOpenDisplay(None)
    if not display:
        fail(3, 'cannot open the display')
    screen = x.XDefaultScreen(display)
    width = x.XDisplayWidth(display, screen)
    height = x.XDisplayHeight(display, screen)
    all_planes = (1 << (8 * ctypes.sizeof(ctypes.c_ulong))) - 1
    pointer = x.XGetImage(display, x.XRootWindow(display, screen), 0, 0, width, height, all_planes, 2)  # ZPixmap
    if not pointer:
        fail(4, 'XGetImage failed')
    image = pointer.contents
    stride = image.bytes_per_line
    data = ctypes.string_at(image.data, stride * image.height)
    rgb = to_rgb(data, image.width, image.height, stride, image.bits_per_pixel, image.byte_order,
                 (image.red_mask, image.green_mask, image.blue_mask))
    width, height = image.width, image.height
    x.XCloseDisplay(display)
    return width, height, rgb


def to_rgb(data, width, height, stride, bpp, byte_order, masks):
    """Packed 8-bit RGB rows, from a ZPixmap."""
    if bpp == 32 and all(m in (0xff, 0xff00, 0xff0000, 0xff000000) for m in masks):
        if stride != width * 4:
            data = b''.join(data[y * stride:y * stride + width * 4] for y in range(height))
        rgb = bytearray(width * height * 3)
        for channel, mask in enumerate(masks):
            index = shift_of(mask) // 8
            if byte_order == 1:  # MSBFirst
                index = 3 - index
            rgb[channel::3] = data[index::4]
        return bytes(rgb)
    if bpp not in (16, 24, 32):
        fail(5, 'unsupported pixel format: %d bits per pixel' % bpp)
    size = bpp // 8
    order = 'little' if byte_order == 0 else 'big'
    shifts = [shift_of(m) for m in masks]
    maxima = [m >> s for m, s in zip(masks, shifts)]
    out = bytearray()
    for y in range(height):
        row = data[y * stride:y * stride + width * size]
        for i in range(0, width * size, size):
            pixel = int.from_bytes(row[i:i + size], order)
            for mask, shift, top in zip(masks, shifts, maxima):
                out.append(((pixel & mask) >> shift) * 255 // top if top else 0)
    return bytes(out)


def png(width, height, rgb):
    row = width * 3
    view = memoryview(rgb)
    raw = b''.join(b'\x00' + view[y * row:(y + 1) * row] for y in range(height))

    def chunk(kind, body):
        return struct.pack('>I', len(body)) + kind + body + struct.pack('>I', zlib.crc32(kind + body) & 0xffffffff)

    header = struct.pack('>IIBBBBB', width, height, 8, 2, 0, 0, 0)  # 8-bit RGB, no interlace
    return b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', header) + chunk(b'IDAT', zlib.compress(raw, 6)) + chunk(b'IEND', b'')


def main():
    width, height, rgb = grab()
    sys.stdout.write('%d %d\n' % (width, height))
    sys.stdout.write(base64.b64encode(png(width, height, rgb)).decode('ascii'))
    sys.stdout.write('\n')


# Run as a program (`python3 -c`); thumbnail.py loads this file under another name for grab().
if __name__ == '__main__':
    main()
