// Runs inside the real extension host (VS Code Server 1.99.3), loaded through the workbench URL's
// extensionTestsPath by test/ui/overlay.test.mjs. It calls the agent tools the way any chat agent
// does, through `vscode.lm.invokeTool`, one call per request file the driver writes
// ($BOTSCREEN_OVERLAY_DIR/request-N.json), and answers each with the result and the host's
// Date.now() just before and just after the call (response-N.json), so the driver can hold what
// the views' overlays drew against when the action ran. An `end` file ends it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { AGENT_TOOLS } from '../../src/lm/tools';
import { waitFor } from '../support/process';

/** Written whole or not at all: the driver polls for it. */
function writeAtomic(file: string, value: unknown): void {
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(value));
  fs.renameSync(`${file}.tmp`, file);
}

export async function run(): Promise<void> {
  const dir = process.env.BOTSCREEN_OVERLAY_DIR;
  if (!dir) {
    return;
  }
  try {
    const extension = vscode.extensions.getExtension('botscreen.bot-screen');
    if (!extension) {
      throw new Error('the extension under test is not loaded');
    }
    await extension.activate();
    const tools = AGENT_TOOLS.map((tool) => tool.id);
    await waitFor(() => tools.every((name) => vscode.lm.tools.some((t) => t.name === name)), 30_000, 100, 'the tools to be registered');
    writeAtomic(path.join(dir, 'ready'), { vscodeVersion: vscode.version });
    for (let n = 1; ; n++) {
      const request = path.join(dir, `request-${n}.json`);
      const end = path.join(dir, 'end');
      await waitFor(() => fs.existsSync(request) || fs.existsSync(end), 900_000, 10, `request ${n} from the driver`);
      if (!fs.existsSync(request)) {
        return;
      }
      const { tool, input } = JSON.parse(fs.readFileSync(request, 'utf8')) as { tool: string; input: object };
      const before = Date.now();
      let text: string;
      try {
        const result = await vscode.lm.invokeTool(tool, { input, toolInvocationToken: undefined });
        text = result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : '[part]')).join('\n');
      } catch (err) {
        text = `the call threw: ${String(err)}`;
      }
      writeAtomic(path.join(dir, `response-${n}.json`), { before, after: Date.now(), text });
    }
  } catch (err) {
    writeAtomic(path.join(dir, 'fatal'), { error: String(err) });
  }
}
