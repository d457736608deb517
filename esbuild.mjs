// Bundles the extension host code (Node, CommonJS, `vscode` external), the webview (browser,
// ESM: noVNC has a top-level await that IIFE output cannot hold) and, with --tests, the Node
// test files. The launcher and relay are bundled as text and travel over exec streams. The sandbox
// image's default tag (from the content hash of sandbox/) is baked in as a constant.
import { build } from 'esbuild';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { contextHash, imageTag } from './scripts/sandbox-context.mjs';

const production = process.argv.includes('--production');
const withTests = process.argv.includes('--tests');
const textFiles = { '.sh': 'text', '.py': 'text' };

const sandbox = {
  __BOTSCREEN_SANDBOX_IMAGE__: JSON.stringify(imageTag()),
  __BOTSCREEN_SANDBOX_HASH__: JSON.stringify(contextHash()),
};
const common = { bundle: true, sourcemap: !production, minify: production, logLevel: 'warning', define: sandbox };

const builds = [
  build({
    ...common,
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    loader: textFiles,
  }),
  build({
    ...common,
    entryPoints: ['webview/main.ts'],
    outfile: 'dist/webview.js',
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
  }),
  // The Open Recording panel: noVNC's decoders fed from a recording (webview/replay.ts).
  build({
    ...common,
    entryPoints: ['webview/replay.ts'],
    outfile: 'dist/replay.js',
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
  }),
];

if (withTests) {
  const testFiles = ['test/unit', 'test/integration', 'test/bench']
    .filter((dir) => existsSync(dir))
    .flatMap((dir) => readdirSync(dir).filter((f) => f.endsWith('.ts')).map((f) => join(dir, f)));
  builds.push(
    build({
      ...common,
      sourcemap: true,
      entryPoints: testFiles,
      outdir: 'out',
      outbase: '.',
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      external: ['vscode'],
      loader: textFiles,
    }),
  );
}

await Promise.all(builds);
