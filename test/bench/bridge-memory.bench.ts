// The bridge process's memory over a long stream (dist/bridge.js, forked as the extension forks it,
// no VS Code, no container): a relay that writes random bytes as fast as the pipe takes them (or
// at MB/s when given), a raw WebSocket client that acknowledges each message as the webview does,
// and the session hidden for 2 s every 10 s, as a person hiding and showing the panel. The bridge
// is started through a probe script that reports its own process.memoryUsage() to a file every
// interval before it loads the bridge, so the table splits the RSS into V8's heap and the buffers
// outside it (`external`: Buffers read from the relay, not yet collected). The webview's own
// messages (noVNC's update requests) go, when asked for, through a stand-in for the extension
// host's input gate and back to the relay, as in the extension: n a second, or one with every
// acknowledgement. Prints a row per interval (minutes, GB moved, RSS, V8's heap and its young
// generation, external, anonymous memory) and the bridge's CPU. Asserts nothing.
// Usage (after `node esbuild.mjs && node esbuild.mjs --tests`):
//   node out/test/bench/bridge-memory.bench.js [minutes] [MB/s|max] [messages a second|ack]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BridgeProcess } from '../../src/core/bridgeProcess';
import { OP_BINARY, OP_TEXT } from '../../src/core/directChannel';
import { ackMessage } from '../../src/core/directProtocol';
import { clientFrame, dial, nextServerFrame, ORIGIN } from '../support/directClient';

const [minutesArg = '5', rateArg = 'max', inputArg = '0'] = process.argv.slice(2);
const MINUTES = Number(minutesArg);
const RATE = rateArg === 'max' ? 0 : Number(rateArg) * 1e6;
/** The webview's own messages: an update request with every acknowledgement ('ack'), or n a second. */
const INPUT = inputArg === 'ack' ? 'ack' : Number(inputArg);
if (!(MINUTES > 0) || !(rateArg === 'max' || RATE > 0) || !(INPUT === 'ack' || INPUT >= 0)) {
  console.error('usage: node out/test/bench/bridge-memory.bench.js [minutes] [MB/s|max] [messages a second|ack]');
  process.exit(2);
}
const SAMPLE_MS = 15_000;
const BRIDGE = join(__dirname, '..', '..', '..', 'dist', 'bridge.js');

/** Loads the bridge after arranging for its memory to be written to `out` every SAMPLE_MS. */
const probe = (out: string) => `
const fs = require('node:fs');
setInterval(() => {
  const m = process.memoryUsage();
  const anon = /Anonymous:\\s+(\\d+)/.exec(fs.readFileSync('/proc/self/smaps_rollup', 'utf8'))?.[1] ?? 'NaN';
  const young = require('node:v8').getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? NaN;
  fs.appendFileSync(${JSON.stringify(out)}, JSON.stringify({ at: Date.now(), cpu: process.cpuUsage(), rss: m.rss, heapTotal: m.heapTotal, young, heapUsed: m.heapUsed, external: m.external, anon: Number(anon) * 1024 }) + '\\n');
}, ${SAMPLE_MS}).unref();
require(${JSON.stringify(BRIDGE)});
`;

/** The relay: random bytes in writes of 1 byte to 64 KB (as docker exec's stream comes), paced to RATE when set; its stdin drained. */
const SOURCE = `
import os, random, sys, threading, time
def drain():
    while sys.stdin.buffer.read1(65536):
        pass
threading.Thread(target=drain, daemon=True).start()
b = os.urandom(65536)
rate = ${RATE}
n, t0 = 0, time.time()
while True:
    n += os.write(1, b[:random.randint(1, 65536)])
    if rate:
        d = n / rate - (time.time() - t0)
        if d > 0:
            time.sleep(d)
`;

/** RFB FramebufferUpdateRequest, incremental, 1280×800: what noVNC sends after each update. */
const UPDATE_REQUEST = Buffer.from([3, 1, 0, 0, 0, 0, 5, 0, 3, 32]);

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
  // The extension host's part: every webview message through the gate back to the relay's stdin.
  let inputs = 0;
  session.onInput = (data) => {
    inputs++;
    session.observe(data);
    session.write(data);
  };
  const client = dial(port, `/${session.offer(ORIGIN)}`);
  await client.response;
  // The webview's part: each binary message acknowledged once it is whole (webview/transport.ts).
  let moved = 0;
  let pending: Buffer = Buffer.alloc(0);
  const sendRequest = () => client.socket.write(clientFrame(OP_BINARY, UPDATE_REQUEST));
  client.socket.removeAllListeners('data'); // dial's own listener keeps every byte received: not for a long run
  client.socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    for (let frame = nextServerFrame(pending); frame; frame = nextServerFrame(pending)) {
      if (frame.opcode === OP_BINARY) {
        moved += frame.payload.length;
        client.socket.write(clientFrame(OP_TEXT, Buffer.from(ackMessage(frame.payload.length))));
        if (INPUT === 'ack') {
          sendRequest();
        }
      }
      pending = pending.subarray(frame.end);
    }
  });
  // Paced by the clock (a timer's period rounds): as many requests as INPUT a second makes by now.
  const requestsFrom = Date.now();
  let requested = 0;
  const requesting =
    typeof INPUT === 'number' && INPUT > 0
      ? setInterval(() => {
          for (const due = Math.floor(((Date.now() - requestsFrom) * INPUT) / 1000); requested < due; requested++) {
            sendRequest();
          }
        }, 5)
      : undefined;
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
  clearInterval(requesting);
  clearInterval(sampling);
  session.end([]);
  await session.exited;
  bridge.dispose();
  client.socket.destroy();

  const rows = readFileSync(samples, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line));
  console.log(`\nThe bridge process's memory: ${MINUTES} min of ${RATE ? `${RATE / 1e6} MB/s` : 'an unpaced flood'}, hidden 2 s of every 10, ${INPUT === 'ack' ? 'an update request with every acknowledgement' : `${INPUT} update requests a second`} through the stand-in gate (dist/bridge.js, a python relay, a raw client that acknowledges)\n`);
  console.log('| min | GB moved | RSS MiB | V8 heap MiB: size (young generation) / used | external MiB (Buffers) | anonymous MiB |');
  console.log('|---|---|---|---|---|---|');
  const movedAt = (at: number) => movedBy.filter(([t]) => t <= at).at(-1)?.[1] ?? 0;
  rows.forEach((r) => {
    console.log(`| ${((r.at - started) / 60_000).toFixed(2)} | ${(movedAt(r.at) / 1e9).toFixed(1)} | ${mib(r.rss)} | ${mib(r.heapTotal)} (${mib(r.young)}) / ${mib(r.heapUsed)} | ${mib(r.external)} | ${mib(r.anon)} |`);
  });
  const afterFirstMinute = rows.filter((r) => r.at - started >= 60_000).map((r) => r.rss);
  const [first, last] = [rows[0], rows.at(-1)];
  const cpu = (r: { cpu: { user: number; system: number } }) => (r.cpu.user + r.cpu.system) / 1000;
  if (last !== first) {
    console.log(`\nThe bridge's CPU from the first sample to the last: ${((100 * (cpu(last) - cpu(first))) / (last.at - first.at)).toFixed(2)} % of a core`);
  }
  if (afterFirstMinute.length > 0) {
    console.log(`\nRSS after the first minute: ${mib(Math.min(...afterFirstMinute))}–${mib(Math.max(...afterFirstMinute))} MiB; ${(moved / 1e9).toFixed(1)} GB in all; ${inputs} webview messages through the stand-in gate (${(inputs / (MINUTES * 60)).toFixed(0)}/s)`);
  }
  rmSync(dir, { recursive: true, force: true });
}

void main();
