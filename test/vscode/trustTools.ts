// Runs inside the real extension host (VS Code Server 1.99.3), loaded through the workbench URL's
// extensionTestsPath by test/ui/trust.test.mjs. The workspace's .vscode/settings.json (written by
// the driver) names a recording docker, `placement: gateway`, `backend: local` and an image other
// than the one of our existing container. The agent tools are called the way any chat agent does,
// through `vscode.lm.invokeTool`: they never run the workspace's program, never put the screen on
// this machine, and never replace the container; they answer with a sentence telling the agent to
// ask the user.
//
// Every check is recorded in a JSON result file ($BOTSCREEN_EHT_RESULT) that the driver reads.
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { hostProcesses, sh, waitFor } from '../support/process';

interface CaseResult {
  readonly name: string;
  readonly ok: boolean;
  readonly ms: number;
  readonly error?: string;
}

function check(condition: unknown, message: string): asserts condition {
  if (!condition) {
    throw new Error(message);
  }
}

async function invoke(name: string, input: object): Promise<string> {
  const result = await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined });
  return result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : '[non-text part]')).join('\n');
}

export async function run(): Promise<void> {
  const resultFile = process.env.BOTSCREEN_EHT_RESULT;
  // Written by the driver once the workspace and its container exist.
  const { recorderLog, container, key, oldImage, newImage } = JSON.parse(fs.readFileSync(String(process.env.BOTSCREEN_EHT_CONFIG), 'utf8')) as Record<string, string>;
  const results: CaseResult[] = [];
  let fatal: string | undefined;
  const recorded = () => fs.readFileSync(recorderLog, 'utf8');
  const xvncIn = () => sh('docker', ['exec', container, 'pgrep', '-x', 'Xvnc']).trim();
  const onThisMachine = () => [...hostProcesses(`/${key}/launcher\\.sh`), ...hostProcesses(`^Xvnc .*/${key}/rfb\\.sock`)];
  try {
    check(resultFile, 'BOTSCREEN_EHT_RESULT is not set');
    const extension = vscode.extensions.getExtension('botscreen.bot-screen');
    check(extension, 'the extension under test is not loaded');
    await extension.activate();
    await waitFor(() => vscode.lm.tools.some((t) => t.name === 'bot-screen_screenshot'), 30_000, 100, 'the tools to be registered');
    const config = () => vscode.workspace.getConfiguration('botScreen');

    const cases: Array<[string, () => Promise<void>]> = [
      ['the workspace settings file is in effect (so the checks below are not vacuous)', async () => {
        const path = config().inspect<string>('sandbox.docker.path');
        check(path?.workspaceValue && path.workspaceValue !== 'docker', `workspace docker.path: ${JSON.stringify(path)}`);
        check(config().get('sandbox.docker.path') === path.workspaceValue, 'VS Code itself would hand out the workspace value');
        check(config().inspect('placement')?.workspaceValue === 'gateway', 'workspace placement');
        check(config().inspect('sandbox.backend')?.workspaceValue === 'local', 'workspace backend');
        check(config().get('sandbox.docker.image') === newImage, 'workspace image');
        check(vscode.workspace.isTrusted, 'the workspace is trusted (Restricted Mode is tested separately)');
      }],
      ['a tool that would replace our container for the workspace image is refused with the sentence', async () => {
        for (const [name, input] of [['bot-screen_screenshot', {}], ['bot-screen_click', { x: 5, y: 5 }], ['bot-screen_type', { text: 'echo typed-by-agent' }]] as const) {
          const text = await invoke(name, input);
          check(
            text ===
              `The screen needs the user's confirmation before it replaces the sandbox container botscreen-${key} (image ${oldImage}) with one of the image ${newImage} that the workspace settings ask for; nothing was changed. Ask the user to run "Bot Screen: Start Screen".`,
            `${name}: ${text}`,
          );
        }
        check(sh('docker', ['inspect', '-f', '{{.State.Running}}', container]).trim() === 'true', 'our container still runs');
        check(xvncIn() === '', 'no screen was started in it');
        check(recorded() === '', `the workspace's docker ran: ${recorded()}`);
        check(onThisMachine().length === 0, `a screen on this machine: ${onThisMachine().join('; ')}`);
      }],
      ['without the workspace image a tool starts the screen in the sandbox, through the user\'s docker, never on this machine', async () => {
        await config().update('sandbox.docker.image', undefined, vscode.ConfigurationTarget.Workspace);
        await waitFor(() => config().inspect('sandbox.docker.image')?.workspaceValue === undefined, 5000, 100, 'the image setting to go');
        const text = await invoke('bot-screen_screenshot', {});
        check(/^Screenshot of the \d+x\d+ screen/.test(text), `screenshot: ${text}`);
        check(xvncIn() !== '', 'Xvnc runs in our container');
        check(sh('docker', ['ps', '-q', '--no-trunc', '--filter', `label=dev.botscreen.workspace=${key}`]).trim() === container, 'the same container');
        check(recorded() === '', `the workspace's docker ran: ${recorded()}`);
        check(onThisMachine().length === 0, `a screen on this machine: ${onThisMachine().join('; ')}`);
        await vscode.commands.executeCommand('botScreen.stop');
        await waitFor(() => xvncIn() === '', 15_000, 100, 'Stop to end Xvnc');
      }],
    ];

    for (const [name, body] of cases) {
      const started = Date.now();
      try {
        await body();
        results.push({ name, ok: true, ms: Date.now() - started });
      } catch (err) {
        results.push({ name, ok: false, ms: Date.now() - started, error: err instanceof Error ? err.stack ?? err.message : String(err) });
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
