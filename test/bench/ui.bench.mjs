// Start-to-first-frame in the real VS Code webview (new container vs warm container) and the
// bridge's throughput into the webview during a screen flood. Prints a table; asserts nothing.
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import {
  REPO_ROOT, SCREEN_FRAME, findWebviewFrame, openWorkbench, runCommand, screenStats, startServer, waitFor,
} from '../ui/harness.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const FLOOD_SECONDS = 10;
const docker = (...args) => execFileSync('docker', args, { encoding: 'utf8' }).trim();
const managed = () => docker('ps', '-aq', '--no-trunc', '--filter', 'label=dev.botscreen.managed=1').split('\n').filter(Boolean);
const probe = screenStats;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (xs, digits = 0) => `${median(xs).toFixed(digits)} [${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)}]`;

async function startAndTime(page, frame) {
  const before = await probe(frame);
  const t0 = Date.now();
  await runCommand(page, 'Bot Screen: Start Screen');
  const after = await waitFor(async () => {
    const p = await probe(frame);
    return p.connects > before.connects && p.firstFrameAt > 0 ? p : undefined;
  }, 60_000, 20, 'the first frame');
  return after.firstFrameAt - t0;
}

/** A maximised xfce4-terminal on the sandbox's screen, running `command` (a shell if empty). */
function startTerminal(container, command) {
  const env = docker('exec', '-u', 'pn', container, 'sh', '-c', 'cat /tmp/botscreen-1000/*/env');
  const vars = env.split('\n').filter((l) => /^(DISPLAY|XAUTHORITY|DBUS_SESSION_BUS_ADDRESS)=/.test(l));
  return spawn('docker', ['exec', '-u', 'pn', ...vars.flatMap((v) => ['-e', v]), container,
    'xfce4-terminal', '--disable-server', '--maximize', ...(command.length ? ['-x', ...command] : [])], { stdio: 'ignore' });
}

/** A terminal printing random base64 as fast as it can. */
function startFlood(container) {
  return startTerminal(container, ['bash', '-c', 'while :; do head -c 3000 /dev/urandom | base64; done']);
}

/** Key press → next frame drawn, with this view in control and a terminal focused on the screen. */
async function keyLatencies(page, frame, container) {
  await frame.locator('#control-button').click();
  await waitFor(async () => (await probe(frame)).inControl, 10_000, 100, 'control');
  const terminal = startTerminal(container, []);
  await new Promise((r) => setTimeout(r, 3000));
  await frame.locator('#screen canvas').first().click();
  await new Promise((r) => setTimeout(r, 1000));
  const samples = [];
  for (let i = 0; i < 50; i++) {
    const t0 = Date.now();
    await page.keyboard.press(i % 2 === 0 ? 'x' : 'Backspace');
    const drawn = await waitFor(async () => {
      const p = await probe(frame);
      return p.lastFrameAt >= t0 ? p.lastFrameAt : undefined;
    }, 5_000, 2, 'a frame after the key').catch(() => undefined);
    if (drawn) samples.push(drawn - t0);
    await new Promise((r) => setTimeout(r, 300));
  }
  terminal.kill('SIGKILL');
  await frame.locator('#control-button').click();
  return samples;
}

const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

const cold = [];
const warm = [];
const mbps = [];
const fps = [];
const keys = [];
for (let run = 0; run < RUNS; run++) {
  const known = new Set(managed());
  const server = await startServer({ vsixPath: path.join(REPO_ROOT, 'bot-screen.vsix'), userSettings: { 'security.workspace.trust.enabled': false } });
  const workbench = await openWorkbench(server);
  try {
    const { page } = workbench;
    await runCommand(page, 'Bot Screen: Open Screen in Editor');
    const frame = await findWebviewFrame(page, SCREEN_FRAME, 30_000);
    cold.push(await startAndTime(page, frame));
    await runCommand(page, 'Bot Screen: Stop Screen');
    await waitFor(async () => (await probe(frame)).hostState === 'stopped', 15_000, 100, 'stopped');
    warm.push(await startAndTime(page, frame));
    const [container] = managed().filter((id) => !known.has(id));
    const flood = startFlood(container);
    await new Promise((r) => setTimeout(r, 3000));
    const a = await probe(frame);
    const t = Date.now();
    await new Promise((r) => setTimeout(r, FLOOD_SECONDS * 1000));
    const b = await probe(frame);
    const seconds = (Date.now() - t) / 1000;
    mbps.push((b.bytesIn - a.bytesIn) / seconds / 1e6);
    fps.push((b.framesDrawn - a.framesDrawn) / seconds);
    flood.kill('SIGKILL');
    docker('exec', container, 'pkill', '-f', 'head -c 3000');
    keys.push(...(await keyLatencies(page, frame, container)));
  } finally {
    await workbench.close();
    await server.stop();
    const ours = managed().filter((id) => !known.has(id));
    if (ours.length) docker('rm', '-f', ...ours);
  }
}

console.log(`\nBot Screen in VS Code Server 1.99.3 (web), ${RUNS} runs, median [min-max]\n`);
console.log('| measure | value |');
console.log('|---|---|');
console.log(`| Start command -> first frame drawn, new container (ms) | ${fmt(cold)} |`);
console.log(`| Start command -> first frame drawn, warm container (ms) | ${fmt(warm)} |`);
console.log(`| bridge into the webview during a terminal flood (MB/s) | ${fmt(mbps, 2)} |`);
console.log(`| frames drawn per second during the flood | ${fmt(fps, 1)} |`);
console.log(`| key press -> next frame drawn, p50 / p95 (ms, ${keys.length} keys) | ${percentile(keys, 50)} / ${percentile(keys, 95)} |`);
