// Extension host CPU while nothing happens, from /proc: the packaged extension in a real VS Code
// Server (test/ui/harness.mjs), sampled for N seconds in three phases: no screen started, a running
// idle desktop with its editor panel open, and the same screen with no panel open. Per phase it
// prints one JSON line: the extension host's own CPU, its reaped children's (short CLI runs), its
// live children's (relays, the events client), the machine's load, and every child it spawned
// (polled every 200 ms, by argv). `none` instead of a VSIX measures VS Code without Bot Screen.
// Extra user settings as JSON in EXTRA_SETTINGS (e.g. {"remote.autoForwardPorts":false}, whose
// port finder is VS Code's own poll). A `flood` phase samples the same while a terminal floods the
// open panel. PROFILE=1 also takes a V8 CPU profile of the extension host over each sampled phase
// (its inspector opened by SIGUSR1; Node 20 needs --experimental-websocket) and prints where its
// time went: self time by part (Bot Screen's bundle, VS Code, Node, GC, idle) and the top
// functions. Build the VSIX unminified (`node esbuild.mjs && npx vsce package`) for readable
// names. Asserts nothing. Usage:
//   node test/bench/idle-cpu.bench.mjs [vsix|none] [seconds] [noscreen,viewer,flood,nopanel]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openWorkbench, runCommand, sleep, startServer, waitFor } from '../ui/harness.mjs';
import { TITLES, VSIX, containersOf, removeContainersOf, screenFrame, screenStats, startFlood } from '../ui/botscreen.mjs';
import { execFileSync } from 'node:child_process';

const [vsixArg = VSIX, secondsArg = '60', phasesArg = 'noscreen,viewer,nopanel'] = process.argv.slice(2);
const SECONDS = Number(secondsArg);
const PHASES = phasesArg.split(',');
const log = (...a) => console.error(`[idle ${new Date().toISOString().slice(11, 19)}]`, ...a);

function stat(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const comm = s.slice(s.indexOf('(') + 1, s.lastIndexOf(')'));
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { pid, comm, state: f[0], ppid: Number(f[1]), own: Number(f[11]) + Number(f[12]), child: Number(f[13]) + Number(f[14]), start: f[19] };
  } catch { return undefined; }
}
const cmdline = (pid) => { try { return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean); } catch { return []; } };
function table() {
  const t = new Map();
  for (const d of fs.readdirSync('/proc')) if (/^\d+$/.test(d)) { const s = stat(Number(d)); if (s && s.state !== 'Z') t.set(s.pid, s); }
  return t;
}
function descendants(t, root) {
  const kids = new Map();
  for (const s of t.values()) { if (!kids.has(s.ppid)) kids.set(s.ppid, []); kids.get(s.ppid).push(s.pid); }
  const out = []; const q = [root];
  while (q.length) for (const c of kids.get(q.pop()) ?? []) { out.push(c); q.push(c); }
  return out;
}
const extHostOf = (serverPid) => { const t = table(); return descendants(t, serverPid).find((p) => cmdline(p).some((a) => a.includes('--type=extensionHost'))); };
function machine() {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1).map(Number);
  const idle = f[3] + f[4];
  return { busy: f.reduce((a, b) => a + b, 0) - idle, all: f.reduce((a, b) => a + b, 0) };
}

const PROFILE = Boolean(process.env.PROFILE);
let inspector;

/** The extension host's inspector (opened once by SIGUSR1): send(method, params) over CDP. */
async function connectInspector(pid) {
  if (inspector) return inspector;
  process.kill(pid, 'SIGUSR1');
  let list;
  await waitFor(async () => { list = await fetch('http://127.0.0.1:9229/json/list').then((r) => r.json()).catch(() => undefined); return list?.length > 0; }, 10_000, 200, 'the inspector');
  const ws = new WebSocket(list[0].webSocketDebuggerUrl);
  await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject; });
  let id = 0;
  const waiting = new Map();
  ws.onmessage = (e) => { const m = JSON.parse(e.data); waiting.get(m.id)?.(m); waiting.delete(m.id); };
  inspector = (method, params = {}) => new Promise((resolve) => { const i = ++id; waiting.set(i, resolve); ws.send(JSON.stringify({ id: i, method, params })); });
  inspector.close = () => ws.close();
  await inspector('Profiler.enable');
  await inspector('Profiler.setSamplingInterval', { interval: 500 });
  return inspector;
}

/** Self time of a CPU profile by part and by function (ms), printed as one JSON line. */
function summarise(name, profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000));
  const part = (cf) => {
    if (cf.url.includes('bot-screen')) return 'Bot Screen';
    if (/^\(/.test(cf.functionName)) return cf.functionName;
    if (cf.url.startsWith('node:') || cf.url === '') return 'Node (and native)';
    if (cf.url.includes('/extensions/') && !cf.url.includes('/lib/vscode/extensions/')) return 'other extensions';
    return 'VS Code';
  };
  const parts = {};
  const fns = new Map();
  for (const [id, ms] of self) {
    const cf = byId.get(id).callFrame;
    const p = part(cf);
    parts[p] = (parts[p] ?? 0) + ms;
    const key = `${cf.functionName || '(anonymous)'} ${cf.url.split('/').slice(-1)[0]}:${cf.lineNumber + 1} [${p}]`;
    fns.set(key, (fns.get(key) ?? 0) + ms);
  }
  // Inclusive time of Bot Screen's frames (outermost only, so nothing counts twice) by function.
  const incl = new Map();
  const walk = (n, inside) => {
    const ours = part(n.callFrame) === 'Bot Screen';
    let total = self.get(n.id) ?? 0;
    for (const c of n.children ?? []) total += walk(byId.get(c), inside || ours);
    if (ours && !inside) { const k = `${n.callFrame.functionName || '(anonymous)'}:${n.callFrame.lineNumber + 1}`; incl.set(k, (incl.get(k) ?? 0) + total); }
    return total;
  };
  walk(profile.nodes[0], false);
  const top = (m, k) => Object.fromEntries([...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([f, ms]) => [f, Number(ms.toFixed(1))]));
  const round = Object.fromEntries(Object.entries(parts).sort((a, b) => b[1] - a[1]).map(([p, ms]) => [p, Number(ms.toFixed(1))]));
  console.log(JSON.stringify({ profile: name, msSelfByPart: round, topSelf: top(fns, 30), botScreenEntriesInclusive: top(incl, 20) }));
  fs.writeFileSync(path.join(os.tmpdir(), `idle-cpu-${name.replace(/\W+/g, '-')}.cpuprofile`), JSON.stringify(profile));
}

/** Samples the ext host over `seconds`: own CPU, reaped children's CPU, live children, and spawns (new child pids seen, polled every 200 ms). */
async function sample(name, serverPid, seconds) {
  const eh = extHostOf(serverPid);
  const t0 = table();
  const a = { at: Date.now(), eh: stat(eh), server: stat(serverPid), m: machine(), kids: new Map(descendants(t0, eh).map((p) => [p, t0.get(p)])) };
  const load0 = os.loadavg();
  const cdp = PROFILE ? await connectInspector(eh) : undefined;
  await cdp?.('Profiler.start');
  const seen = new Map();
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    const t = table();
    for (const p of descendants(t, eh)) if (!a.kids.has(p) && !seen.has(p)) seen.set(p, cmdline(p).slice(0, 6).join(' '));
    await sleep(200);
  }
  const profiled = cdp && (await cdp('Profiler.stop')).result.profile;
  const t1 = table();
  const b = { at: Date.now(), eh: stat(eh), server: stat(serverPid), m: machine() };
  const secs = (b.at - a.at) / 1000;
  const pct = (ticks) => ((ticks / 100 / secs) * 100).toFixed(2);
  let liveKids = 0;
  const liveList = [];
  for (const p of descendants(t1, eh)) {
    const s = t1.get(p); const s0 = a.kids.get(p);
    const d = s0 && s0.start === s.start ? s.own - s0.own : s.own;
    liveKids += d; liveList.push(`${p}:${s.comm}:${pct(d)}%`);
  }
  const spawnsByCmd = {};
  for (const c of seen.values()) spawnsByCmd[c] = (spawnsByCmd[c] ?? 0) + 1;
  const res = {
    phase: name, seconds: Number(secs.toFixed(1)),
    extHostOwn: pct(b.eh.own - a.eh.own), extHostReapedChildren: pct(b.eh.child - a.eh.child), liveChildren: pct(liveKids),
    total: pct(b.eh.own - a.eh.own + b.eh.child - a.eh.child + liveKids),
    serverMain: pct(b.server.own - a.server.own),
    machine: (((b.m.busy - a.m.busy) / (b.m.all - a.m.all)) * 100 * os.cpus().length).toFixed(1),
    load: `${load0.map((x) => x.toFixed(2)).join(' ')} -> ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`,
    spawns: seen.size, spawnsByCmd, live: liveList,
  };
  console.log(JSON.stringify(res));
  if (profiled) summarise(name, profiled);
  return res;
}

const server = await startServer({ vsixPath: vsixArg === 'none' ? undefined : vsixArg, userSettings: { 'botScreen.statusBar.visible': 'always', 'botScreen.idleStopMinutes': 0, ...JSON.parse(process.env.EXTRA_SETTINGS ?? '{}') } });
let wb;
try {
  wb = await openWorkbench(server, { loadTimeoutMs: 240_000 });
  const { page } = wb;
  if (vsixArg !== 'none') await page.locator('.statusbar-item', { hasText: 'Screen:' }).first().waitFor({ timeout: 60_000 });
  else await sleep(10_000);
  await sleep(15_000);
  log('ext host pid', extHostOf(server.pid));
  if (PHASES.includes('noscreen')) await sample('no screen (extension active, nothing started)', server.pid, SECONDS);
  if (vsixArg !== 'none' && ['viewer', 'flood', 'nopanel'].some((p) => PHASES.includes(p))) {
    await runCommand(page, TITLES.openInEditor);
    await sleep(3000);
    const drawn = async () => { const f = await screenFrame(page, 5000).catch(() => undefined); const s = f && await screenStats(f).catch(() => undefined); return s && s.framesDrawn > 0; };
    for (let attempt = 0; ; attempt++) {
      await runCommand(page, TITLES.start, { timeoutMs: 60_000 });
      try { await waitFor(drawn, 150_000, 1000, 'a frame drawn'); break; } catch (err) { log('start failed, again', err.message); if (attempt >= 3) throw err; }
    }
    log('screen running', containersOf(server.workspace));
    await sleep(10_000);
    if (PHASES.includes('viewer')) await sample('idle desktop, viewer open', server.pid, SECONDS);
    if (PHASES.includes('flood')) {
      const [container] = containersOf(server.workspace);
      startFlood(container);
      await sleep(8000);
      await sample('terminal flood, viewer open', server.pid, SECONDS);
      execFileSync('docker', ['exec', container, 'pkill', '-f', 'urandom'], { stdio: 'ignore' });
      await sleep(5000);
    }
    if (PHASES.includes('nopanel')) {
      await runCommand(page, 'View: Close All Editors');
      if (await page.locator('.part.sidebar').isVisible()) await runCommand(page, 'View: Close Primary Side Bar');
      await sleep(10_000);
      await sample('no panel open, screen running', server.pid, SECONDS);
    }
  }
} finally {
  inspector?.close();
  await wb?.close();
  await server.stop();
  removeContainersOf(server.workspace);
}
