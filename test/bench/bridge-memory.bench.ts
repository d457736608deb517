// The bridge process's memory over a long stream (dist/bridge.js, forked as the extension forks it,
// no VS Code, no container): a relay that writes random bytes as fast as the pipe takes them (or
// at MB/s when given), a raw WebSocket client that acknowledges each message as the webview does,
// and the session hidden for 2 s every 10 s, as a person hiding and showing the panel. The bridge
// is started through a probe script that reports its own process.memoryUsage() to a file every
// interval before it loads the bridge, so the table splits the RSS into V8's heap and the buffers
// outside it (`external`: Buffers read from the relay, not yet collected). Prints a row per
// interval: minutes, GB moved, RSS, heap used, external, anonymous memory. Asserts nothing.
// Usage (after `node esbuild.mjs && node esbuild.mjs --tests`):
//   node out/test/bench/bridge-memory.bench.js [minutes] [MB/s|max]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BridgeProcess } from '../../src/core/bridgeProcess';
import { OP_BINARY, OP_TEXT } from '../../src/core/directChannel';
import { ackMessage } from '../../src/core/directProtocol';
import { clientFrame, dial, nextServerFrame, ORIGIN } from '../support/directClient';

const [minutesArg = '5', rateArg = 'max'] = process.argv.slice(2);
const MINUTES = Number(minutesArg);
const RATE = rateArg === 'max' ? 0 : Number(rateArg) * 1e6;
const SAMPLE_MS = 15_000;
const BRIDGE = join(__dirname, '..', '..', '..', 'dist', 'bridge.js');

/** Loads the bridge after arranging for its memory to be written to `out` every SAMPLE_MS. */
const probe = (out: string) => `
const fs = require('node:fs');
setInterval(() => {
  const m = process.memoryUsage();
  const anon = /Anonymous:\\s+(\\d+)/.exec(fs.readFileSync('/proc/self/smaps_rollup', 'utf8'))?.[1] ?? 'NaN';
  fs.appendFileSync(${JSON.stringify(out)}, JSON.stringify({ at: Date.now(), rss: m.rss, heapUsed: m.heapUsed, external: m.external, anon: Number(anon) * 1024 }) + '\\n');
}, ${SAMPLE_MS}).unref();
require(${JSON.stringify(BRIDGE)});
`;

/** The relay: 64 KB of random bytes written again and again, paced to RATE when set. */
const SOURCE = `
import os, time
b = os.urandom(65536)
rate = ${RATE}
n, t0 = 0, time.time()
while True:
    os.write(1, b)
    n += len(b)
    if rate:
        d = n / rate - (time.time() - t0)
        if d > 0:
            time.sleep(d)
`;

const silent = { debug() {}, info() {}, warn: (m: string) => console.error(m), error: (m: string) => console.error(m) };
const mib = (n: number) => (n / 1048576).toFixed(1);

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'botscreen-bridge-memory-'));
  const samples = join(dir, 'memory.jsonl');
  const script = join(dir, 'probe.js');
  writeFileSync(samples, '');
  writeFileSync(script, probe(samples));
  const bridge = new BridgeProcess(script, silent);
  const port = await bridge.listen();
  const session = bridge.open({ command: 'python3', args: ['-c', SOURCE] }, true, { quietMs: 150, maxMs: 1000 }, { exited() {}, activity() {} });
  const client = dial(port, `/${session.offer(ORIGIN)}`);
  await client.response;
  // The webview's part: each binary message acknowledged once it is whole (webview/transport.ts).
  let moved = 0;
  let pending: Buffer = Buffer.alloc(0);
  client.socket.removeAllListeners('data'); // dial's own listener keeps every byte received: not for a long run
  client.socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    for (let frame = nextServerFrame(pending); frame; frame = nextServerFrame(pending)) {
      if (frame.opcode === OP_BINARY) {
        moved += frame.payload.length;
        client.socket.write(clientFrame(OP_TEXT, Buffer.from(ackMessage(frame.payload.length))));
      }
      pending = pending.subarray(frame.end);
    }
  });
  let seq = 0;
  const hideShow = setInterval(() => {
    session.setVisible(false, ++seq);
    setTimeout(() => session.setVisible(true, ++seq), 2000);
  }, 10_000);
  // Bytes delivered by time, to put beside the bridge's own samples.
  const started = Date.now();
  const movedBy: [number, number][] = [];
  const sampling = setInterval(() => movedBy.push([Date.now(), moved]), 1000);
  await new Promise((resolve) => setTimeout(resolve, MINUTES * 60_000 + 1000));
  clearInterval(hideShow);
  clearInterval(sampling);
  session.end([]);
  await session.exited;
  bridge.dispose();
  client.socket.destroy();

  const rows = readFileSync(samples, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line));
  console.log(`\nThe bridge process's memory: ${MINUTES} min of ${RATE ? `${RATE / 1e6} MB/s` : 'an unpaced flood'}, hidden 2 s of every 10 (dist/bridge.js, a python relay, a raw client that acknowledges)\n`);
  console.log('| min | GB moved | RSS MiB | V8 heap used MiB | external MiB (Buffers) | anonymous MiB |');
  console.log('|---|---|---|---|---|---|');
  const movedAt = (at: number) => movedBy.filter(([t]) => t <= at).at(-1)?.[1] ?? 0;
  rows.forEach((r) => {
    console.log(`| ${((r.at - started) / 60_000).toFixed(2)} | ${(movedAt(r.at) / 1e9).toFixed(1)} | ${mib(r.rss)} | ${mib(r.heapUsed)} | ${mib(r.external)} | ${mib(r.anon)} |`);
  });
  const afterFirstMinute = rows.filter((r) => r.at - started >= 60_000).map((r) => r.rss);
  if (afterFirstMinute.length > 0) {
    console.log(`\nRSS after the first minute: ${mib(Math.min(...afterFirstMinute))}–${mib(Math.max(...afterFirstMinute))} MiB; ${(moved / 1e9).toFixed(1)} GB in all`);
  }
  rmSync(dir, { recursive: true, force: true });
}

void main();
