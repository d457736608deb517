// Writes the duration into a WebM that MediaRecorder made: Chromium streams the file while it
// records and never goes back to fill in the Segment Info's Duration, so players cannot seek in
// it and ffprobe reports no duration. EBML (the Matroska container) is parsed just enough to
// insert that one element.

const ID_SEGMENT = 0x18538067;
const ID_INFO = 0x1549a966;
const ID_DURATION = 0x4489;

/** An EBML variable-length integer at `at`: its length in bytes and value (undefined: "unknown size"). */
function readVint(bytes: Uint8Array, at: number, keepMarker: boolean): { length: number; value: number | undefined } {
  const first = bytes[at];
  let length = 1;
  while (length <= 8 && !(first & (0x80 >> (length - 1)))) {
    length++;
  }
  if (length > 8) {
    throw new Error('bad EBML length');
  }
  let value = keepMarker ? first : first & (0xff >> length);
  let allOnes = value === 0xff >> length;
  for (let i = 1; i < length; i++) {
    value = value * 256 + bytes[at + i];
    allOnes &&= bytes[at + i] === 0xff;
  }
  return { length, value: !keepMarker && allOnes ? undefined : value };
}

/** A size as an 8-byte vint (EBML allows any length, so sizes can grow in place). */
function vint8(value: number): Uint8Array {
  const out = new Uint8Array(8);
  out[0] = 0x01;
  for (let i = 7, v = value; i >= 1; i--, v = Math.floor(v / 256)) {
    out[i] = v % 256;
  }
  return out;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * The file with a Duration of `durationMs` in its Segment Info (timecode scale: Chromium's 1 ms).
 * A file that has one already, or that is not laid out as expected, is returned unchanged.
 */
export function withWebmDuration(bytes: Uint8Array, durationMs: number): Uint8Array {
  try {
    let at = 0;
    // The EBML header, then the Segment.
    const headerId = readVint(bytes, at, true);
    const headerSize = readVint(bytes, at + headerId.length, false);
    at += headerId.length + headerSize.length + (headerSize.value ?? 0);
    const segmentId = readVint(bytes, at, true);
    if (segmentId.value !== ID_SEGMENT) {
      return bytes;
    }
    const segmentSizeAt = at + segmentId.length;
    const segmentSize = readVint(bytes, segmentSizeAt, false);
    at = segmentSizeAt + segmentSize.length;
    // The Segment's children up to Info (a SeekHead or Void may come first).
    for (;;) {
      const id = readVint(bytes, at, true);
      const size = readVint(bytes, at + id.length, false);
      const body = at + id.length + size.length;
      if (size.value === undefined) {
        return bytes;
      }
      if (id.value !== ID_INFO) {
        at = body + size.value;
        continue;
      }
      for (let child = body; child < body + size.value; ) {
        const childId = readVint(bytes, child, true);
        const childSize = readVint(bytes, child + childId.length, false);
        if (childId.value === ID_DURATION) {
          return bytes;
        }
        child += childId.length + childSize.length + (childSize.value ?? 0);
      }
      const duration = new Uint8Array(11);
      duration.set([0x44, 0x89, 0x88]);
      new DataView(duration.buffer).setFloat64(3, durationMs);
      const grown = size.value + duration.length;
      const segmentHead =
        segmentSize.value === undefined
          ? bytes.subarray(0, at)
          : concat([bytes.subarray(0, segmentSizeAt), vint8(segmentSize.value + duration.length + 8 - size.length), bytes.subarray(segmentSizeAt + segmentSize.length, at)]);
      return concat([segmentHead, bytes.subarray(at, at + id.length), vint8(grown), bytes.subarray(body, body + size.value), duration, bytes.subarray(body + size.value)]);
    }
  } catch {
    return bytes;
  }
}
