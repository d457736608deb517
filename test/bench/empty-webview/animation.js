// Benchmark only (test/bench/same-run.bench.mjs), never shipped: a 30-updates-a-second canvas
// animation, run unchanged in VS Code's empty webview (extension.js inlines it) and in a plain
// Chromium tab, so the two browsers' CPU for the same drawing tells what hosting a canvas in a
// webview costs by itself, without Bot Screen or noVNC. Each update puts 64×64 tiles along a
// diagonal band that moves, the way a VNC viewer puts an update's rectangles.
(() => {
  const canvas = document.createElement('canvas');
  canvas.width = window.innerWidth;
  canvas.height = window.innerHeight;
  canvas.style.cssText = 'position:fixed;left:0;top:0';
  document.body.style.margin = '0';
  document.body.appendChild(canvas);
  const ctx = canvas.getContext('2d');
  const tile = new ImageData(64, 64);
  let step = 0;
  window.__animationUpdates = 0;
  setInterval(() => {
    step++;
    for (let i = 0; i < tile.data.length; i += 4) {
      tile.data[i] = (i + step * 7) & 255;
      tile.data[i + 1] = (step * 3) & 255;
      tile.data[i + 2] = (i >> 8) & 255;
      tile.data[i + 3] = 255;
    }
    const offset = (step * 16) % canvas.width;
    for (let y = 0; y < canvas.height; y += 64) {
      ctx.putImageData(tile, (offset + y) % canvas.width, y);
    }
    window.__animationUpdates++;
  }, 1000 / 30);
})();
