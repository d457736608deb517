// Bundles the extension-host test module (agentTools.ts) into one CommonJS file that a VS Code
// extension host can load as its extensionTestsPath (VS Code Server here, desktop VS Code through
// @vscode/test-electron).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));

/** `entry`: the test module in test/vscode/ (agentTools.ts unless another is named). */
export async function bundleExtensionHostTests(outfile, entry = 'agentTools.ts') {
  await build({
    entryPoints: [path.join(here, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    loader: { '.sh': 'text', '.py': 'text' },
    logLevel: 'warning',
  });
  return outfile;
}
