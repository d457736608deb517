// Bundles the extension-host test module (agentTools.ts) into one CommonJS file that a VS Code
// extension host can load as its extensionTestsPath (VS Code Server here, desktop VS Code through
// @vscode/test-electron).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { contextHash, imageTag } from '../../scripts/sandbox-context.mjs';

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
    // The product code it imports reads the sandbox image tag baked in the same way esbuild.mjs does.
    define: {
      __BOTSCREEN_SANDBOX_IMAGE__: JSON.stringify(imageTag()),
      __BOTSCREEN_SANDBOX_HASH__: JSON.stringify(contextHash()),
    },
    logLevel: 'warning',
  });
  return outfile;
}
