// The extension host's own cost of streaming over the direct channel, without VS Code or a
// container: a child process writes random bytes to a pipe at a set rate (as the relay's exec
// client does), the real SocketPump and DirectChannelServer carry them, and a WebSocket client in
// another process takes each message, works on it for a time proportional to its size (as noVNC
// does), and acknowledges it as webview/transport.ts does. Prints, per setting of the number of
// messages kept on the way (1 as shipped, unbounded as before), this process's CPU % of one core,
// the messages and acknowledgements per second and the MB/s delivered; the settings alternate,
// n windows each. Asserts nothing. Usage (after `node esbuild.mjs --tests`):
//   node --experimental-websocket out/test/bench/direct-channel.bench.js [MB/s] [seconds] [windows]
import { spawn } from 'node:child_process';
import { DirectChannelServer } from '../../src/core/directChannel';
import { SUBPROTOCOL } from '../../src/core/directProtocol';
import { DIRECT_MAX_MESSAGES, SocketPump } from '../../src/core/pump';

const [rateArg = '1.5', secondsArg = '10', windowsArg = '3'] = process.argv.slice(2);
const RATE = Number(rateArg) * 1e6;
const SECONDS = Number(secondsArg);
const WINDOWS = Number(windowsArg);
/** The source's write size and the client's work per KB (env CHUNK, CLIENT_US_PER_KB). */
const CHUNK = Number(process.env.CHUNK ?? 8192);
const CLIENT_US_PER_KB = Number(process.env.CLIENT_US_PER_KB ?? 40);

/** The relay: random bytes at RATE, CHUNK at a time, to stdout. */
const SOURCE = `
const { randomBytes } = require('node:crypto');
const chunk = randomBytes(${CHUNK});
const gap = ${(CHUNK / RATE) * 1000};
let due = performance.now();
const tick = () => { for (const now = performance.now(); due <= now; due += gap) process.stdout.write(chunk); setTimeout(tick, 1); };
tick();
`;

/** The webview: busy for a time proportional to each message, then an acknowledgement. */
const CLIENT = `
const ws = new WebSocket(process.argv[1], '${SUBPROTOCOL}');
ws.binaryType = 'arraybuffer';
ws.onmessage = (e) => {
  const end = performance.now() + (e.data.byteLength / 1024) * ${CLIENT_US_PER_KB} / 1000;
  while (performance.now() < end);
  ws.send(String(e.data.byteLength));
};
`;

async function window(server: DirectChannelServer, port: number, maxMessages: number) {
  const source = spawn(process.execPath, ['-e', SOURCE], { stdio: ['ignore', 'pipe', 'inherit'] });
  const pump = new SocketPump(source.stdout, undefined, maxMessages);
  let messages = 0;
  let acks = 0;
  let bytes = 0;
  // Node's WebSocket sends no Origin header: the offer is for a request without one.
  const offer = server.offer(undefined as unknown as string, (socket) => {
    const send = socket.send.bind(socket);
    socket.send = (chunks, length) => {
      messages++;
      bytes += length;
      return send(chunks, length);
    };
    socket.onAck = (n) => {
      acks++;
      pump.acked(n);
    };
    pump.attach(socket);
  });
  const client = spawn(process.execPath, ['--experimental-websocket', '--no-warnings', '-e', CLIENT, `ws://127.0.0.1:${port}/${offer.token}`], { stdio: 'inherit' });
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const [m0, a0, b0, c0, t0] = [messages, acks, bytes, process.cpuUsage(), performance.now()];
  await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  const cpu = process.cpuUsage(c0);
  const s = (performance.now() - t0) / 1000;
  client.kill();
  source.kill();
  pump.dispose();
  await new Promise((resolve) => setTimeout(resolve, 500));
  return {
    cpuPct: ((cpu.user + cpu.system) / 1e4 / s).toFixed(2),
    messagesPerS: ((messages - m0) / s).toFixed(0),
    acksPerS: ((acks - a0) / s).toFixed(0),
    MBps: ((bytes - b0) / s / 1e6).toFixed(2),
  };
}

async function main(): Promise<void> {
  const server = new DirectChannelServer();
  const port = await server.start();
  const settings = [DIRECT_MAX_MESSAGES, Infinity];
  for (let i = 0; i < WINDOWS; i++) {
    for (const maxMessages of i % 2 === 0 ? settings : [...settings].reverse()) {
      const r = await window(server, port, maxMessages);
      console.log(JSON.stringify({ maxMessages: String(maxMessages), rateMBps: RATE / 1e6, ...r }));
    }
  }
  server.dispose();
}

void main();
