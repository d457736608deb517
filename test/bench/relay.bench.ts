// Relay throughput: raw `docker exec -i cat` against our relay, through a real container.
// Prints a table; asserts nothing (numbers vary up to 4x on shared 2-core machines).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { RELAY_SOURCE } from '../../src/core/relay';
import { IMAGE } from '../support/env';

const MB = 1 << 20;
const SIZE = Number(process.env.BENCH_MB ?? 200) * MB;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

// In the sandbox: a unix-socket server that echoes (round trip) or sends SIZE bytes (download).
const SERVER = `
import os, socket, sys
path, mode, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
try: os.unlink(path)
except OSError: pass
srv = socket.socket(socket.AF_UNIX); srv.bind(path); srv.listen(1)
print("ready", flush=True)
conn, _ = srv.accept()
if mode == "send":
    chunk = b"\\0" * (1 << 20); left = size
    while left > 0:
        n = conn.send(chunk[:min(left, len(chunk))]); left -= n
    conn.shutdown(socket.SHUT_WR)
else:
    buf = bytearray(1 << 20)
    while True:
        n = conn.recv_into(buf)
        if not n: break
        conn.sendall(memoryview(buf)[:n])
    conn.shutdown(socket.SHUT_WR)
conn.close()
`;

function docker(...args: string[]): string {
  return execFileSync('docker', args, { encoding: 'utf8' }).trim();
}

/** Pipes SIZE bytes through `argv` (or only reads, for download) and returns MB/s. */
function measure(argv: string[], upload: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
    let received = 0;
    const started = process.hrtime.bigint();
    child.stdout.on('data', (chunk: Buffer) => {
      received += chunk.length;
    });
    child.on('error', reject);
    child.on('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (received !== SIZE) {
        reject(new Error(`${argv.join(' ').slice(0, 80)}: received ${received} of ${SIZE} bytes`));
      } else {
        resolve(SIZE / MB / seconds);
      }
    });
    if (upload) {
      const block = randomBytes(MB);
      let sent = 0;
      const write = () => {
        while (sent < SIZE) {
          sent += MB;
          if (!child.stdin.write(block)) {
            child.stdin.once('drain', write);
            return;
          }
        }
        child.stdin.end();
      };
      write();
    } else {
      child.stdin.end();
    }
  });
}

async function startServer(cid: string, mode: 'send' | 'echo'): Promise<string> {
  const path = `/tmp/bench-${mode}.sock`;
  const server = spawn('docker', ['exec', '-i', cid, 'python3', '-c', SERVER, path, mode, String(SIZE)], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => server.stdout.once('data', () => resolve()));
  return path;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const cid = docker('run', '-d', '--init', '--label', 'botscreen.bench=1', IMAGE, 'sleep', 'infinity');
  try {
    const rows: Array<[string, number[]]> = [
      ['download: docker exec -i head -c (raw)', []],
      ['download: relay from a unix socket', []],
      ['round trip: docker exec -i cat (raw)', []],
      ['round trip: relay + echo server', []],
    ];
    for (let round = 0; round < ROUNDS; round++) {
      rows[0][1].push(await measure(['docker', 'exec', '-i', cid, 'head', '-c', String(SIZE), '/dev/zero'], false));
      const sendPath = await startServer(cid, 'send');
      rows[1][1].push(await measure(['docker', 'exec', '-i', cid, 'python3', '-c', RELAY_SOURCE, sendPath], false));
      rows[2][1].push(await measure(['docker', 'exec', '-i', cid, 'cat'], true));
      const echoPath = await startServer(cid, 'echo');
      rows[3][1].push(await measure(['docker', 'exec', '-i', cid, 'python3', '-c', RELAY_SOURCE, echoPath], true));
    }
    console.log(`\nRelay throughput, ${SIZE / MB} MB per run, ${ROUNDS} runs (MB/s, median [min-max])\n`);
    console.log('| path | MB/s | relay / raw |');
    console.log('|---|---|---|');
    rows.forEach(([name, values], i) => {
      const ratio = i % 2 === 1 ? `${(median(values) / median(rows[i - 1][1])).toFixed(2)}x` : '';
      console.log(`| ${name} | ${median(values).toFixed(0)} [${Math.min(...values).toFixed(0)}-${Math.max(...values).toFixed(0)}] | ${ratio} |`);
    });
  } finally {
    docker('rm', '-f', cid);
  }
}

void main();
