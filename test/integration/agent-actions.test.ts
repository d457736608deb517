// Agent actions against a real Docker engine and the real desktop image: the runner behind the
// language-model tools. Every check reads the sandbox itself (files, window focus, pointer,
// processes), and only what this test created (its own workspace key, files and window titles).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import type { ActionResult } from '../../src/core/actions/catalog';
import { MAX_TEXT_LENGTH } from '../../src/core/actions/input';
import { AgentActionRunner } from '../../src/core/actions/agentActionRunner';
import { HumanHasControlError, LeaseStore } from '../../src/core/lease';
import { SandboxBackends } from '../../src/core/backends/registry';
import { ScreenController } from '../../src/core/screen';
import { hostProcesses, removeTestContainers, settings, sh, tempMarkers, testLog, waitFor } from '../support/env';

const WIDTH = 1152;
const HEIGHT = 720;
const tag = randomBytes(4).toString('hex');

/** Width, height and the inflated pixel data size of a PNG, read by hand (not by the code under test). */
function decodePng(png: Uint8Array): { width: number; height: number; colorType: number; raw: Buffer } {
  const buf = Buffer.from(png);
  assert.deepEqual([...buf.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  assert.equal(buf.toString('latin1', 12, 16), 'IHDR');
  const width = buf.readUInt32BE(16);
  const height = buf.readUInt32BE(20);
  const colorType = buf[25];
  const idat: Buffer[] = [];
  for (let at = 8; at < buf.length; ) {
    const length = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    if (type === 'IDAT') {
      idat.push(buf.subarray(at + 8, at + 8 + length));
    }
    at += 12 + length;
  }
  return { width, height, colorType, raw: inflateSync(Buffer.concat(idat)) };
}

/** Distinct RGB colours of a PNG written with filter 0 on every row (what the screenshot script writes). */
function distinctColours(png: Uint8Array): number {
  const { width, height, raw } = decodePng(png);
  const seen = new Set<number>();
  for (let y = 0; y < height; y++) {
    const row = y * (1 + width * 3);
    assert.equal(raw[row], 0, 'filter type 0');
    for (let x = 0; x < width; x++) {
      const i = row + 1 + x * 3;
      seen.add((raw[i] << 16) | (raw[i + 1] << 8) | raw[i + 2]);
    }
  }
  return seen.size;
}

describe('agent actions in a docker sandbox', { timeout: 600_000 }, () => {
  const config = settings({ geometry: `${WIDTH}x${HEIGHT}` });
  const controller = new ScreenController(new SandboxBackends(), () => config, testLog, tempMarkers());
  const leaseDirs: string[] = [];
  const leaseStore = (key: string) => {
    leaseDirs.push(mkdtempSync(join(tmpdir(), 'botscreen-leases-')));
    return new LeaseStore(leaseDirs.at(-1)!, key);
  };
  const lease = leaseStore(config.workspaceKey);
  const runner = new AgentActionRunner(controller, lease, testLog);
  let container = '';
  let display: string[] = [];

  /** Runs argv inside the sandbox as the desktop user, on the screen. */
  const inSandbox = (...argv: string[]) => sh('docker', ['exec', '-u', 'pn', container, 'env', ...display, ...argv]);
  const pointer = () => inSandbox('xdotool', 'getmouselocation').replace(/ screen:.*$/s, '').trim();
  const fileIn = (path: string) => sh('docker', ['exec', container, 'cat', path]);
  const exists = (path: string) => sh('docker', ['exec', container, 'sh', '-c', `test -e "$1" && echo yes`, 'sh', path]).trim() === 'yes';

  const done = (result: ActionResult, what: string) => {
    assert.equal(result.status, 'done', `${what}: ${JSON.stringify(result)}`);
    return result as Extract<ActionResult, { status: 'done' }>;
  };

  /** Opens an xfce4-terminal with a unique title; returns its window id once it is mapped. */
  async function openTerminal(title: string, x: number, y: number): Promise<string> {
    sh('docker', ['exec', '-d', '-u', 'pn', container, 'env', ...display,
      'xfce4-terminal', '--disable-server', `--title=${title}`, `--geometry=60x10+${x}+${y}`]);
    let id = '';
    await waitFor(() => {
      id = inSandbox('xdotool', 'search', '--onlyvisible', '--name', `^${title}$`).trim().split('\n')[0];
      return id !== '';
    }, 20_000, 50, `terminal window ${title}`);
    await new Promise((r) => setTimeout(r, 500)); // let the shell start
    return id;
  }

  async function windowCenter(id: string): Promise<{ x: number; y: number }> {
    const geometry = inSandbox('xdotool', 'getwindowgeometry', '--shell', id);
    const v = Object.fromEntries(geometry.trim().split('\n').map((l) => l.split('=')));
    return { x: Number(v.X) + Math.floor(Number(v.WIDTH) / 2), y: Number(v.Y) + Math.floor(Number(v.HEIGHT) / 2) };
  }

  before(() => {
    assert.equal(controller.status.state, 'stopped');
  });

  after(async () => {
    await controller.stop().catch(() => undefined);
    controller.dispose();
    removeTestContainers(config.workspaceKey);
    for (const dir of leaseDirs) {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('bad input is refused before anything runs: no screen is even started', async () => {
    const cases: Array<[Parameters<AgentActionRunner['perform']>[0], unknown, RegExp]> = [
      ['click', { x: -1, y: 10 }, /x must not be negative/],
      ['click', { x: Number.NaN, y: 10 }, /got NaN/],
      ['move', { x: 10.5, y: 10 }, /whole number/],
      ['type', { text: 'x'.repeat(MAX_TEXT_LENGTH + 1) }, /at most 10000/],
      ['key', { chord: 'nosuchkey' }, /unknown key name "nosuchkey"/],
      ['openUrl', { url: 'file:///etc/passwd' }, /only http and https/],
      ['wait', { seconds: 3600 }, /at most 30/],
    ];
    for (const [kind, input, pattern] of cases) {
      const result = await runner.perform(kind, input);
      assert.equal(result.status, 'badInput', `${kind} ${JSON.stringify(input)}`);
      assert.match((result as { message: string }).message, pattern);
    }
    assert.equal(controller.status.state, 'stopped', 'bad input started no screen');
    assert.equal(sh('docker', ['ps', '-aq', '--filter', `label=dev.botscreen.workspace=${config.workspaceKey}`]).trim(), '', 'no container');
  });

  test('a screenshot starts the screen on demand in the sandbox and is a PNG of the screen size', async () => {
    const started = Date.now();
    const result = done(await runner.perform('screenshot', {}), 'screenshot');
    console.log(`# first screenshot, screen started on demand: ${Date.now() - started} ms`);
    assert.equal(controller.status.state, 'running');
    assert.equal(controller.status.placement?.where, 'sandbox');
    assert.equal(controller.status.sandbox?.onHost, false);
    container = controller.status.sandbox!.id;
    const env = controller.status.screen!.env;
    display = [`DISPLAY=${env.DISPLAY}`, `XAUTHORITY=${env.XAUTHORITY}`];

    const png = decodePng(result.screenshot!.png);
    assert.deepEqual([png.width, png.height, png.colorType], [WIDTH, HEIGHT, 2], 'RGB PNG of the screen size');
    assert.equal(png.raw.length, HEIGHT * (1 + WIDTH * 3), 'the pixel data is complete');
    // Right after the start the desktop may still be painting: a later screenshot shows it.
    await waitFor(async () => distinctColours((done(await runner.perform('screenshot', {}), 'screenshot').screenshot!.png)) >= 10, 60_000, 50,
      'a screenshot with a painted desktop (at least 10 colours)');

    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = Date.now();
      done(await runner.perform('screenshot', {}), 'screenshot again');
      times.push(Date.now() - t);
    }
    console.log(`# screenshot of a running ${WIDTH}x${HEIGHT} screen: ${times.join(', ')} ms, ${result.screenshot!.png.length} bytes`);
  });

  test('click focuses the window clicked; type and key run a command in it, as the desktop user', async () => {
    const first = await openTerminal(`agent-a-${tag}`, 40, 60);
    const second = await openTerminal(`agent-b-${tag}`, 560, 360);
    await waitFor(() => inSandbox('xdotool', 'getactivewindow').trim() === second, 5000, 50, 'the newer terminal to have focus');

    const target = await windowCenter(first);
    const click = done(await runner.perform('click', target), 'click');
    assert.deepEqual(click.size, { width: WIDTH, height: HEIGHT });
    await waitFor(() => inSandbox('xdotool', 'getactivewindow').trim() === first, 5000, 50, 'the clicked terminal to have focus');

    const file = `/tmp/typed-by-agent-${tag}`;
    // Quotes, $ and backticks arrive as typed: only the terminal's shell reads them, in single
    // quotes here, so any expansion on the way would show in the file.
    done(await runner.perform('type', { text: `echo '$HOME "q" \`id\` $(id)' > ${file}` }), 'type');
    assert.equal(exists(file), false, 'nothing runs before Return');
    done(await runner.perform('key', { chord: 'Return' }), 'key');
    await waitFor(() => exists(file), 10_000, 50, `${file} in the sandbox`);
    assert.equal(fileIn(file), '$HOME "q" `id` $(id)\n');
    // Text that starts with a dash is text, not an xdotool option.
    done(await runner.perform('type', { text: 'echo ' }), 'type');
    done(await runner.perform('type', { text: `--dash-- >> ${file}\n` }), 'type with a leading dash');
    await waitFor(() => fileIn(file).endsWith('--dash--\n'), 10_000, 50, 'the second line');
    assert.equal(sh('docker', ['exec', container, 'stat', '-c', '%U', file]).trim(), 'pn', 'typed as the desktop user');
  });

  test('move, drag and scroll reach the screen', async () => {
    done(await runner.perform('move', { x: 321, y: 123 }), 'move');
    assert.equal(pointer(), 'x:321 y:123');
    done(await runner.perform('drag', { from: { x: 700, y: 500 }, to: { x: 720, y: 530 } }), 'drag');
    assert.equal(pointer(), 'x:720 y:530');
    done(await runner.perform('scroll', { x: 300, y: 200, direction: 'down', amount: 2 }), 'scroll');
    assert.equal(pointer(), 'x:300 y:200');
    done(await runner.perform('click', { x: 10, y: 700, double: true, button: 'middle' }), 'double click');
  });

  test('out-of-range coordinates are refused against the real screen size, nothing sent', async () => {
    done(await runner.perform('move', { x: 50, y: 60 }), 'move');
    for (const input of [{ x: WIDTH, y: 10 }, { x: 10, y: HEIGHT }, { x: 99999, y: 99999 }]) {
      const result = await runner.perform('click', input);
      assert.equal(result.status, 'badInput', JSON.stringify(result));
      assert.match((result as { message: string }).message, new RegExp(`outside the ${WIDTH}x${HEIGHT} screen`));
    }
    const drag = await runner.perform('drag', { from: { x: 1, y: 1 }, to: { x: WIDTH + 1, y: 1 } });
    assert.equal(drag.status, 'badInput');
    assert.equal(pointer(), 'x:50 y:60', 'the pointer never moved');
  });

  test('while a person holds control every action is refused (not queued) and nothing is sent', async () => {
    const file = `/tmp/refused-by-lease-${tag}`;
    await openTerminal(`agent-c-${tag}`, 200, 200);
    done(await runner.perform('move', { x: 77, y: 88 }), 'move');
    lease.acquire(`viewer-${tag}`, 'test takes control');
    try {
      const attempts: Array<[Parameters<AgentActionRunner['perform']>[0], unknown]> = [
        ['screenshot', {}],
        ['move', { x: 5, y: 5 }],
        ['click', { x: 5, y: 5 }],
        ['drag', { from: { x: 5, y: 5 }, to: { x: 9, y: 9 } }],
        ['scroll', { x: 5, y: 5, direction: 'up' }],
        ['type', { text: `touch ${file}\n` }],
        ['key', { chord: 'Return' }],
        ['openUrl', { url: `http://127.0.0.1:9/nourl-${tag}` }],
        ['wait', { seconds: 1 }],
      ];
      const started = Date.now();
      for (const [kind, input] of attempts) {
        const result = await runner.perform(kind, input);
        assert.equal(result.status, 'humanHasControl', `${kind}: ${JSON.stringify(result)}`);
        const refusal = result as Extract<ActionResult, { status: 'humanHasControl' }>;
        assert.ok(refusal.error instanceof HumanHasControlError);
        assert.match(refusal.error.message, /A person has taken control of the screen.*ask them/);
        assert.equal(refusal.discarded, false);
      }
      assert.ok(Date.now() - started < 2000, 'refused at once, nothing waited for (the wait included)');
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(exists(file), false, 'the typed command never ran');
      assert.equal(pointer(), 'x:77 y:88', 'the pointer never moved');
      assert.equal(sh('docker', ['exec', container, 'pgrep', '-f', `nourl-${tag}`]).trim(), '', 'no browser was started');
    } finally {
      lease.release(`viewer-${tag}`);
    }
    done(await runner.perform('move', { x: 5, y: 5 }), 'acting again after hand back');
  });

  test('an action during which control changed hands is discarded and reported as refused', async () => {
    const waiting = runner.perform('wait', { seconds: 1 });
    await new Promise((r) => setTimeout(r, 200));
    lease.acquire(`viewer-${tag}`, 'takes over mid-action');
    lease.release(`viewer-${tag}`);
    const result = await waiting;
    assert.equal(result.status, 'humanHasControl', JSON.stringify(result));
    assert.equal((result as { discarded: boolean }).discarded, true);

    // Long typing stops at once when a person takes control (timed in control-handover.test.ts).
    const id = await openTerminal(`agent-d-${tag}`, 100, 420);
    done(await runner.perform('click', await windowCenter(id)), 'focus');
    const file = `/tmp/interrupted-${tag}`;
    const typing = runner.perform('type', { text: `cat > ${file}\n${'y'.repeat(1000)}` });
    await waitFor(() => exists(file), 10_000, 50, 'cat to start');
    lease.acquire(`viewer-${tag}`, 'takes over while the agent types');
    try {
      const typed = await typing;
      assert.equal(typed.status, 'humanHasControl', JSON.stringify(typed));
      assert.match((typed as { progress?: string }).progress ?? '', /typed (\d+|at most \d+|\d+ to \d+) of \d+ characters/);
      await new Promise((r) => setTimeout(r, 1000));
      // cat has only a line buffer in the terminal: read what the pty holds by ending the line.
      inSandbox('xdotool', 'key', 'Return');
      await new Promise((r) => setTimeout(r, 500));
      const ys = fileIn(file).replace(/\n/g, '').length;
      console.log(`# typing interrupted by a takeover: ${ys} of 1000 characters arrived`);
      assert.ok(ys < 1000, `typing stopped early (${ys} of 1000 characters arrived)`);
    } finally {
      lease.release(`viewer-${tag}`);
    }
  });

  test('open_url runs Chromium inside the sandbox with its profile in the home; nothing on this machine', async () => {
    // A page served inside the sandbox, so its title proves the browser loaded the URL.
    sh('docker', ['exec', '-u', 'pn', container, 'sh', '-c',
      `mkdir -p /tmp/page-${tag} && printf '<title>agent-page-${tag}</title><h1>hello</h1>' > /tmp/page-${tag}/index.html`]);
    sh('docker', ['exec', '-d', '-u', 'pn', container, 'python3', '-m', 'http.server', '8765', '--bind', '127.0.0.1', '--directory', `/tmp/page-${tag}`]);
    await new Promise((r) => setTimeout(r, 500));
    const started = Date.now();
    done(await runner.perform('openUrl', { url: `http://127.0.0.1:8765/?tag=${tag}` }), 'open url');
    await waitFor(() => inSandbox('xdotool', 'search', '--name', `agent-page-${tag}`).trim() !== '', 60_000, 50, 'the page title in a browser window');
    console.log(`# open_url to a visible page title: ${Date.now() - started} ms`);
    const browser = sh('docker', ['exec', container, 'pgrep', '-a', '-f', 'botscreen-browser']);
    assert.match(browser, /--user-data-dir=\/home\/pn\/\.config\/botscreen-browser/);
    assert.equal(sh('docker', ['exec', container, 'stat', '-c', '%U %a', '/home/pn/.config/botscreen-browser']).trim(), 'pn 700');
    assert.deepEqual(hostProcesses('^\\S*chrom\\S* .*botscreen-browser'), [], 'no browser on this machine');
  });

  test('no xdotool, Xvnc or Chromium of this screen ever runs on this machine', async () => {
    // Sample while a long typing action runs: xdotool is visible inside the sandbox, never here.
    const id = await openTerminal(`agent-e-${tag}`, 300, 100);
    done(await runner.perform('click', await windowCenter(id)), 'focus');
    const typing = runner.perform('type', { text: `: ${tag}${'z'.repeat(400)}` });
    let seenInSandbox = 0;
    const onHost: string[] = [];
    while (await Promise.race([typing.then(() => false), new Promise((r) => setTimeout(() => r(true), 50))])) {
      onHost.push(...hostProcesses(`^(\\S*/)?xdotool .*${tag}`), ...hostProcesses(`^(\\S*/)?X(tiger)?vnc .*${config.workspaceKey}`));
      onHost.push(...hostProcesses('^\\S*chrom\\S* .*botscreen-browser'));
      if (sh('docker', ['exec', container, 'pgrep', '-f', `^xdotool keyup .* type .*${tag}`]).trim() !== '') {
        seenInSandbox++;
      }
    }
    done(await typing, 'type');
    assert.ok(seenInSandbox > 0, 'xdotool was seen running inside the sandbox');
    assert.deepEqual(onHost, [], 'no screen program ran on this machine');
    assert.notEqual(sh('docker', ['exec', container, 'pgrep', '-x', 'Xvnc']).trim(), '', 'Xvnc runs in the sandbox');
  });

  test('a refused placement returns the refusal and starts nothing', async () => {
    const refused = settings({ backend: 'modal', backendRaw: 'modal' });
    const other = new ScreenController(new SandboxBackends(), () => refused, testLog, tempMarkers());
    const otherLease = leaseStore(refused.workspaceKey);
    const otherRunner = new AgentActionRunner(other, otherLease, testLog);
    try {
      for (const [kind, input] of [['screenshot', {}], ['click', { x: 1, y: 1 }], ['type', { text: 'x' }]] as const) {
        const result = await otherRunner.perform(kind, input);
        assert.equal(result.status, 'problem', JSON.stringify(result));
        assert.deepEqual((result as { problem: unknown }).problem, { code: 'refused', backend: 'modal' });
      }
      assert.equal(other.status.state, 'refused');
      assert.equal(sh('docker', ['ps', '-aq', '--filter', `label=dev.botscreen.workspace=${refused.workspaceKey}`]).trim(), '');
    } finally {
      other.dispose();
    }
  });

  test('a gateway placement whose screen nobody started is not started by an agent', async () => {
    const gateway = settings({ placement: 'gateway' });
    const other = new ScreenController(new SandboxBackends(), () => gateway, testLog, tempMarkers());
    const otherRunner = new AgentActionRunner(other, leaseStore(gateway.workspaceKey), testLog);
    try {
      const result = await otherRunner.perform('screenshot', {});
      assert.equal(result.status, 'problem');
      assert.deepEqual((result as { problem: unknown }).problem, { code: 'notRunning' });
      assert.equal(other.status.state, 'stopped');
      assert.deepEqual(hostProcesses(`^Xvnc .*${gateway.workspaceKey}`), []);
    } finally {
      other.dispose();
    }
  });
});
