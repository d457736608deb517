// Bundles the extension-host test module (agentTools.ts) into one CommonJS file that a VS Code
// extension host can load as its extensionTestsPath (VS Code Server here, desktop VS Code through
// @vscode/test-electron).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));

export async function bundleExtensionHostTests(outfile) {
  await build({
    entryPoints: [path.join(here, 'agentTools.ts')],
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
