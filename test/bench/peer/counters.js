// The benchmark's in-page counters, installed (Playwright addInitScript) in every frame of both
// browsers before any page script runs, so both viewers are measured by the same code:
// - a drawn frame is noVNC's flip: a drawImage from a detached canvas (its backbuffer) onto a
//   canvas in the document. Counted as it happens, with its wall-clock time.
// - the first picture: the first frame whose drawn rectangle holds pixels the server sent. noVNC
//   flips once when it sizes its canvas after ServerInit, before any update: that blank frame is a
//   frame, not yet the screen (checked by reading its rectangle's alpha, only until the first picture).
// - key → next drawn frame: a keydown (capture, before noVNC sees it; listened for from the first
//   frame drawn on) arms the clock; the next drawn frame stops it. A key that sees no frame before the next key counts as missed.
// - pixels redrawn: the area of each flip's damaged rectangle (what the screen changed).
// - bytes in (only with { webSocketBytes: true }, the plain tab): every WebSocket message. The
//   extension's bytes arrive by postMessage; the benchmark reads those from the product's own
//   counter (see webviewCounters in test/bench/same-run.bench.mjs).
// Read with `window.__benchCounters`; never polled to time anything.
function installBenchCounters({ webSocketBytes }) {
  if (window.__benchCounters) return;
  const now = () => performance.timeOrigin + performance.now();
  const c = {
    frames: 0,
    firstFrameAt: 0,
    lastFrameAt: 0,
    /** Wall-clock times of the latest drawn frames (a ring), to find "the first frame after t". */
    recent: [],
    bytes: 0,
    /** Pixels of the visible canvas that frames redrew (each flip's damaged rectangle). */
    pixels: 0,
    /** When the page's WebSocket was created and when it opened (where an open's time goes). */
    webSocketAt: 0,
    webSocketOpenAt: 0,
    messages: 0,
    keyAt: 0,
    keyLatencies: [],
    keysMissed: 0,
    keysSeen: 0,
    firstFrameAfter(t) {
      return this.recent.find((x) => x >= t) ?? 0;
    },
    firstPictureAt: 0,
    /** The first frame at or after t that shows the screen: once a picture was drawn, every later frame does. */
    firstPictureAfter(t) {
      if (!this.firstPictureAt) return 0;
      return this.firstPictureAt >= t ? this.firstPictureAt : this.firstFrameAfter(t);
    },
  };
  window.__benchCounters = c;

  const drawImage = CanvasRenderingContext2D.prototype.drawImage;
  CanvasRenderingContext2D.prototype.drawImage = function (image, ...rest) {
    const result = drawImage.call(this, image, ...rest);
    if (image instanceof HTMLCanvasElement && !image.isConnected && this.canvas.isConnected) {
      const t = now();
      // Listening from the first frame on: VS Code writes a webview's document with
      // document.open(), which erases every listener of the window added before.
      if (!c.listening) {
        c.listening = true;
        window.addEventListener('keydown', onKeyDown, true);
      }
      c.frames++;
      // A flip copies the damaged rectangle (sx, sy, sw, sh, dx, dy, dw, dh); a whole-image draw copies it all.
      c.pixels += rest.length >= 8 ? rest[2] * rest[3] : image.width * image.height;
      if (c.firstFrameAt === 0) c.firstFrameAt = t;
      if (c.firstPictureAt === 0 && drewPixels(image, rest)) c.firstPictureAt = t;
      c.lastFrameAt = t;
      c.recent.push(t);
      if (c.recent.length > 2000) c.recent.splice(0, 1000);
      if (c.keyAt) {
        c.keyLatencies.push(t - c.keyAt);
        c.keyAt = 0;
      }
    }
    return result;
  };

  /** Whether the flipped rectangle of the backbuffer holds anything drawn (noVNC's blank canvas is transparent; the server's pixels are opaque). */
  const drewPixels = (image, rest) => {
    const [sx, sy, sw, sh] = rest.length >= 8 ? rest : [0, 0, image.width, image.height];
    if (!(sw > 0 && sh > 0)) return false;
    const data = image.getContext('2d').getImageData(sx, sy, sw, sh).data;
    for (let i = 3; i < data.length; i += 4) if (data[i] !== 0) return true;
    return false;
  };

  const onKeyDown = (event) => {
    c.keysSeen++;
    if (c.keyAt) c.keysMissed++;
    c.keyAt = performance.timeOrigin + event.timeStamp;
  };

  // Both sides: when the (last) WebSocket was created and opened, to show where an open's time goes.
  {
    const Native = window.WebSocket;
    const Counted = function (...args) {
      const ws = new Native(...args);
      c.webSocketAt = now();
      ws.addEventListener('open', () => { c.webSocketOpenAt = now(); });
      if (webSocketBytes) {
        ws.addEventListener('message', (event) => {
          const d = event.data;
          c.messages++;
          c.bytes += d.byteLength ?? d.size ?? d.length ?? 0;
        });
      }
      return ws;
    };
    Counted.prototype = Native.prototype;
    for (const k of ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']) Counted[k] = Native[k];
    window.WebSocket = Counted;
  }
}
