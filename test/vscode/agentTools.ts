// Runs inside the real extension host (VS Code Server 1.99.3), loaded through the workbench URL's
// extensionTestsPath by test/ui/agent-tools.test.mjs. It calls the agent tools the way any chat
// agent does, through `vscode.lm.invokeTool`, and checks the sandbox itself with docker.
//
// The workbench ignores run()'s outcome (the exit code is 0 even when it throws), so every check is
// recorded in a JSON result file ($BOTSCREEN_EHT_RESULT) that the driver reads; a missing file is a
// failure there.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { LeaseStore } from '../../src/core/lease';
import { AGENT_TOOLS } from '../../src/lm/tools';
import { KeyTool } from '../../src/lm/tools/keyTool';
import { OpenUrlTool } from '../../src/lm/tools/openUrlTool';
import { TypeTool } from '../../src/lm/tools/typeTool';
import { workspaceKey } from '../../src/settings';
import { hostProcesses, sh, sleep, waitFor } from '../support/process';

interface CaseResult {
  readonly name: string;
  readonly ok: boolean;
  readonly ms: number;
  readonly error?: string;
  readonly notes: string[];
}

/** The product's own list of tools (each class's id), not a copy. */
const TOOLS = AGENT_TOOLS.map((tool) => tool.id);
const tag = randomBytes(4).toString('hex');
const notes: string[] = [];

function check(condition: unknown, message: string): asserts condition {
  if (!condition) {
    throw new Error(message);
  }
}


async function invoke(name: string, input: object): Promise<string> {
  const result = await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined });
  return result.content
    .map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : `[${(part as object)?.constructor?.name ?? typeof part}]`))
    .join('\n');
}

function container(): string {
  return sh('docker', ['ps', '-q', '--no-trunc', '--filter', `label=dev.botscreen.workspace=${workspaceKey()}`]).trim().split('\n')[0];
}

function pngSize(file: string): { width: number; height: number } {
  const buf = fs.readFileSync(file);
  check(buf.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), `${file} is not a PNG`);
  check(buf.toString('latin1', 12, 16) === 'IHDR', `${file} has no IHDR first`);
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

export async function run(): Promise<void> {
  const resultFile = process.env.BOTSCREEN_EHT_RESULT;
  const width = Number(process.env.BOTSCREEN_EHT_WIDTH);
  const height = Number(process.env.BOTSCREEN_EHT_HEIGHT);
  const results: CaseResult[] = [];
  let fatal: string | undefined;
  try {
    check(resultFile, 'BOTSCREEN_EHT_RESULT is not set');
    const extension = vscode.extensions.getExtension('botscreen.bot-screen');
    check(extension, 'the extension under test is not loaded');
    await extension.activate();
    await waitFor(() => TOOLS.every((name) => vscode.lm.tools.some((t) => t.name === name)), 30_000, 100, 'the tools to be registered');
    const globalStorage = fs.readFileSync(path.join(path.dirname(resultFile), 'global-storage'), 'utf8').trim();
    const leases = new LeaseStore(path.join(globalStorage, 'leases'), workspaceKey());

    let id = '';
    let display: string[] = [];
    const inSandbox = (...argv: string[]) => sh('docker', ['exec', '-u', 'pn', id, 'env', ...display, ...argv]);
    const exists = (file: string) => sh('docker', ['exec', id, 'sh', '-c', 'test -e "$1" && echo yes', 'sh', file]).trim() === 'yes';
    const pointer = () => inSandbox('xdotool', 'getmouselocation').replace(/ screen:.*$/s, '').trim();

    const cases: Array<[string, () => Promise<void>]> = [
      ['every tool is contributed and registered, with an input schema', async () => {
        const contributed = (extension.packageJSON.contributes.languageModelTools as Array<{ name: string }>).map((t) => t.name);
        check(JSON.stringify(contributed) === JSON.stringify(TOOLS), `package.json contributes the registered tools: ${contributed.join(', ')}`);
        check(TOOLS.length === 9, `nine tools: ${TOOLS.join(', ')}`);
        for (const name of TOOLS) {
          const info = vscode.lm.tools.find((t) => t.name === name);
          check(info, `${name} is in vscode.lm.tools`);
          check(info.inputSchema && (info.inputSchema as { type?: string }).type === 'object', `${name} has an object input schema`);
          check(info.description.length > 40, `${name} has a model description`);
        }
      }],
      ['confirmations and progress lines show the exact input; looking and pointing ask nothing', async () => {
        // The extension's own prepareInvocation, as VS Code calls it before each tool call (the
        // driver also sees the questions VS Code asks as modal dialogs when these tools run).
        const text = (value: string | vscode.MarkdownString | undefined) => (typeof value === 'string' ? value : value?.value ?? '');
        const url = `https://example.com/path?q=${tag}`;
        const open = new OpenUrlTool().prepareInvocation({ url });
        check(open.confirmationMessages, 'open_url asks');
        check(text(open.confirmationMessages.message).includes(url), `open_url question: ${text(open.confirmationMessages.message)}`);
        check(text(open.confirmationMessages.message).includes('Site: `example.com`'), 'open_url names the site');
        check(text(open.invocationMessage) === `Opening \`${url}\` on the Bot Screen`, `open_url progress: ${text(open.invocationMessage)}`);
        const typed = `rm -rf ~\u202e\n${'x'.repeat(700)}`;
        const type = new TypeTool().prepareInvocation({ text: typed });
        check(type.confirmationMessages, 'type asks');
        const question = text(type.confirmationMessages.message);
        check(question.includes('(710 characters)') && question.includes('```text\nrm -rf ~\\u{202E}\nxxx'), `type question: ${question.slice(0, 300)}`);
        check(question.includes('Only the first 500 of 710 characters are shown.') && !question.includes('x'.repeat(499)), 'a long text is cut, and says so');
        check(text(type.invocationMessage).startsWith('Typing `rm -rf ~\\u{202E}⏎xxx') && text(type.invocationMessage).includes('…` (710 characters)'), `type progress: ${text(type.invocationMessage)}`);
        const key = new KeyTool().prepareInvocation({ chord: 'ctrl+enter' });
        check(text(key.confirmationMessages?.message) === 'The agent wants to press `ctrl+Return` on the Bot Screen.', `key question: ${text(key.confirmationMessages?.message)}`);
        check(text(key.invocationMessage) === 'Pressing `ctrl+Return` on the Bot Screen', `key progress: ${text(key.invocationMessage)}`);
        const tool = (id: string) => new (AGENT_TOOLS.find((t) => t.id === id)!)();
        for (const [id, input] of [['bot-screen_screenshot', {}], ['bot-screen_move', { x: 1, y: 1 }], ['bot-screen_wait', { seconds: 1 }], ['bot-screen_click', { x: 1, y: 1 }]] as const) {
          check(tool(id).prepareInvocation(input).confirmationMessages === undefined, `${id} asks nothing`);
        }
        check(new OpenUrlTool().prepareInvocation({ url: 'file:///etc/passwd' }).confirmationMessages === undefined, 'input that is refused anyway asks nothing');
      }],
      ['screenshot starts the screen on demand and returns a PNG of the screen size', async () => {
        check(container() === '', 'no sandbox before the first tool call');
        const started = Date.now();
        const text = await invoke('bot-screen_screenshot', {});
        notes.push(`first screenshot (screen started on demand): ${Date.now() - started} ms`);
        const match = /Screenshot of the (\d+)x(\d+) screen.*saved as a PNG file: (\S+\.png)/s.exec(text);
        check(match, `screenshot result: ${text}`);
        check(Number(match[1]) === width && Number(match[2]) === height, `reported size ${match[1]}x${match[2]}`);
        const size = pngSize(match[3]);
        check(size.width === width && size.height === height, `PNG is ${size.width}x${size.height}, the screen ${width}x${height}`);
        check((fs.statSync(match[3]).mode & 0o777) === 0o600, 'the saved screenshot is private (0600)');
        id = container();
        check(id !== '', 'a sandbox container runs');
        const env = sh('docker', ['exec', '-u', 'pn', id, 'sh', '-c', `cat /tmp/botscreen-1000/${workspaceKey()}/env`]);
        display = env.split('\n').filter((l) => /^(DISPLAY|XAUTHORITY)=/.test(l));
        check(display.length === 2, `the published env: ${env}`);
        check(fs.existsSync(path.join(globalStorage, 'screens')), `the extension keeps its markers (and leases) in ${globalStorage}`);
      }],
      ['click and type change the sandbox (a command typed into a clicked terminal runs there)', async () => {
        // Two terminals: the newer one has the focus, the click must move it to the older one.
        const open = async (title: string, at: string) => {
          sh('docker', ['exec', '-d', '-u', 'pn', id, 'env', ...display, 'xfce4-terminal', '--disable-server', `--title=${title}`, `--geometry=60x10${at}`]);
          let found = '';
          await waitFor(() => (found = inSandbox('xdotool', 'search', '--onlyvisible', '--name', `^${title}$`).trim().split('\n')[0]) !== '', 20_000, 100, title);
          return found;
        };
        const win = await open(`eht-a-${tag}`, '+60+80');
        const other = await open(`eht-b-${tag}`, '+500+330');
        await waitFor(() => inSandbox('xdotool', 'getactivewindow').trim() === other, 5000, 100, 'the newer terminal to have the focus');
        await sleep(500);
        const geometry = Object.fromEntries(inSandbox('xdotool', 'getwindowgeometry', '--shell', win).trim().split('\n').map((l) => l.split('=')));
        const x = Number(geometry.X) + Math.floor(Number(geometry.WIDTH) / 2);
        const y = Number(geometry.Y) + Math.floor(Number(geometry.HEIGHT) / 2);
        const clicked = await invoke('bot-screen_click', { x, y });
        check(/^Clicked the left button at/.test(clicked), `click result: ${clicked}`);
        await waitFor(() => inSandbox('xdotool', 'getactivewindow').trim() === win, 5000, 100, 'the click to focus the terminal');
        const file = `/tmp/typed-by-agent-${tag}`;
        const typed = await invoke('bot-screen_type', { text: `echo hi > ${file}` });
        check(/^Typed \d+ characters/.test(typed), `type result: ${typed}`);
        check(/^Pressed Return/.test(await invoke('bot-screen_key', { chord: 'enter' })), 'key result');
        await waitFor(() => exists(file), 10_000, 100, `${file} in the sandbox`);
        check(sh('docker', ['exec', id, 'cat', file]) === 'hi\n', 'the file holds what the command wrote');
      }],
      ['bad input gives clear errors and sends nothing', async () => {
        check(/^Moved/.test(await invoke('bot-screen_move', { x: 40, y: 50 })), 'move');
        const cases: Array<[string, object, RegExp]> = [
          ['bot-screen_click', { x: width, y: 1 }, new RegExp(`outside the ${width}x${height} screen`)],
          ['bot-screen_click', { x: 5000, y: 5000 }, /outside/],
          ['bot-screen_click', { x: -1, y: 1 }, /x must not be negative/],
          ['bot-screen_click', { x: Number.NaN, y: 1 }, /x must be a number of screen pixels, got (NaN|null)/],
          ['bot-screen_drag', { from: { x: 1, y: 1 }, to: { x: 1, y: -5 } }, /to\.y must not be negative/],
          ['bot-screen_type', { text: 'x'.repeat(10_001) }, /at most 10000/],
          ['bot-screen_key', { chord: 'nosuchkey' }, /unknown key name "nosuchkey"/],
          ['bot-screen_key', { chord: 'ctrl+$(reboot)' }, /unknown key name/],
          ['bot-screen_open_url', { url: 'file:///etc/passwd' }, /only http and https/],
          ['bot-screen_wait', { seconds: 600 }, /at most 30/],
        ];
        for (const [name, input, pattern] of cases) {
          const text = await invoke(name, input);
          check(/^Invalid input: /.test(text) && /Nothing was sent to the screen\.$/.test(text), `${name}: ${text}`);
          check(pattern.test(text), `${name} ${JSON.stringify(input).slice(0, 80)}: ${text}`);
        }
        check(pointer() === 'x:40 y:50', `the pointer never moved (${pointer()})`);
      }],
      ['with a person in control every tool is refused and nothing reaches the screen', async () => {
        const file = `/tmp/refused-${tag}`;
        check(/^Moved/.test(await invoke('bot-screen_move', { x: 70, y: 90 })), 'move');
        leases.acquire(`eht-viewer-${tag}`, 'the extension-host test takes control');
        try {
          const inputs: Record<string, object> = {
            'bot-screen_screenshot': {},
            'bot-screen_move': { x: 1, y: 1 },
            'bot-screen_click': { x: 1, y: 1 },
            'bot-screen_drag': { from: { x: 1, y: 1 }, to: { x: 9, y: 9 } },
            'bot-screen_scroll': { x: 1, y: 1, direction: 'down' },
            'bot-screen_type': { text: `touch ${file}\n` },
            'bot-screen_key': { chord: 'Return' },
            'bot-screen_open_url': { url: `https://example.com/refused-${tag}` },
            'bot-screen_wait': { seconds: 2 },
          };
          const started = Date.now();
          for (const name of TOOLS) {
            const text = await invoke(name, inputs[name]);
            check(/^A person has taken control of the screen\. Screen actions are refused \(not queued\)/.test(text), `${name}: ${text}`);
            check(/ask them to hand control back/.test(text), `${name} tells the agent to ask: ${text}`);
          }
          notes.push(`nine refusals while a person holds control: ${Date.now() - started} ms`);
          await sleep(1000);
          check(!exists(file), 'the typed command never ran');
          check(pointer() === 'x:70 y:90', `the pointer never moved (${pointer()})`);
          check(sh('docker', ['exec', id, 'pgrep', '-f', `refused-${tag}`]).trim() === '', 'no browser was opened');
        } finally {
          leases.release(`eht-viewer-${tag}`);
        }
        check(/^Moved/.test(await invoke('bot-screen_move', { x: 3, y: 3 })), 'the agent acts again after hand back');
      }],
      ['open_url, scroll, drag and wait run in the sandbox; no screen program runs on this machine', async () => {
        const onHost: string[] = [];
        const sample = setInterval(() => {
          onHost.push(...hostProcesses(`^(\\S*/)?xdotool .*${tag}`), ...hostProcesses('^\\S*chrom\\S* .*botscreen-browser'));
          onHost.push(...hostProcesses(`^(\\S*/)?X(tiger)?vnc .*${workspaceKey()}`));
        }, 50);
        try {
          const opened = await invoke('bot-screen_open_url', { url: `http://127.0.0.1:9/eht-${tag}` });
          check(/^Opened http:\/\/127\.0\.0\.1:9\/eht-/.test(opened), `open_url: ${opened}`);
          await waitFor(() => sh('docker', ['exec', id, 'pgrep', '-f', `eht-${tag}`]).trim() !== '' ||
            sh('docker', ['exec', id, 'pgrep', '-f', 'botscreen-browser']).trim() !== '', 20_000, 100, 'chromium in the sandbox');
          check(/^Scrolled down by 2/.test(await invoke('bot-screen_scroll', { x: 200, y: 200, direction: 'down', amount: 2 })), 'scroll');
          check(/^Dragged/.test(await invoke('bot-screen_drag', { from: { x: 300, y: 300 }, to: { x: 320, y: 330 } })), 'drag');
          check(pointer() === 'x:320 y:330', `drag ends at its target (${pointer()})`);
          check(/^Waited 0\.2 seconds/.test(await invoke('bot-screen_wait', { seconds: 0.2 })), 'wait');
          const typed = await invoke('bot-screen_type', { text: `${tag} ${'q'.repeat(150)}` });
          check(/^Typed/.test(typed), typed);
        } finally {
          clearInterval(sample);
        }
        check(onHost.length === 0, `screen programs on this machine: ${onHost.join('; ')}`);
        check(sh('docker', ['exec', id, 'pgrep', '-x', 'Xvnc']).trim() !== '', 'Xvnc runs in the sandbox');
      }],
      ['Save Screenshot writes a PNG where asked', async () => {
        const target = vscode.Uri.file(path.join(os.tmpdir(), `botscreen-eht-${tag}.png`));
        try {
          const saved = await vscode.commands.executeCommand<vscode.Uri | undefined>('botScreen.saveScreenshot', target);
          check(saved?.fsPath === target.fsPath, `saved to ${saved?.fsPath}`);
          const size = pngSize(target.fsPath);
          check(size.width === width && size.height === height, `PNG is ${size.width}x${size.height}`);
        } finally {
          fs.rmSync(target.fsPath, { force: true });
        }
      }],
      ['under a refused placement the tools return the refusal sentence and start nothing', async () => {
        await vscode.commands.executeCommand('botScreen.stop');
        const config = vscode.workspace.getConfiguration('botScreen');
        // The user's own setting: a workspace's backend is ignored (it picks what runs here).
        await config.update('sandbox.backend', 'modal', vscode.ConfigurationTarget.Global);
        try {
          await waitFor(() => vscode.workspace.getConfiguration('botScreen').get('sandbox.backend') === 'modal', 5000, 100, 'the setting');
          for (const [name, input] of [['bot-screen_screenshot', {}], ['bot-screen_click', { x: 1, y: 1 }]] as const) {
            const text = await invoke(name, input);
            check(
              text.startsWith('The sandbox backend is modal, which cannot host a screen yet.') && text.includes('"botScreen.placement": "gateway"'),
              `${name}: ${text}`,
            );
          }
          check(sh('docker', ['exec', id, 'pgrep', '-x', 'Xvnc']).trim() === '', 'the stopped screen was not started again');
        } finally {
          await config.update('sandbox.backend', 'docker', vscode.ConfigurationTarget.Global);
        }
      }],
    ];

    for (const [name, body] of cases) {
      const started = Date.now();
      notes.length = 0;
      try {
        await body();
        results.push({ name, ok: true, ms: Date.now() - started, notes: [...notes] });
      } catch (err) {
        results.push({ name, ok: false, ms: Date.now() - started, error: err instanceof Error ? err.stack ?? err.message : String(err), notes: [...notes] });
      }
    }
  } catch (err) {
    fatal = err instanceof Error ? err.stack ?? err.message : String(err);
  } finally {
    if (resultFile) {
      fs.writeFileSync(resultFile, JSON.stringify({ vscodeVersion: vscode.version, fatal, results }, null, 2));
    }
  }
}
