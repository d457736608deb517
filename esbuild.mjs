// Bundles the extension host code (Node, CommonJS, `vscode` external), the recorder's and the bridge's processes, the webview (browser,
// ESM: noVNC has a top-level await that IIFE output cannot hold) and, with --tests, the Node
// test files. The launcher and relay are bundled as text and travel over exec streams. The sandbox
// image's default tag (from the content hash of sandbox/) is baked in as a constant.
import { build } from 'esbuild';
import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
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

/**
 * noVNC probes for WebCodecs H.264 with a top-level await (a decoder configured and a frame
 * decoded) that holds up the whole module graph: the Screen webview's script, and so its first
 * message to the host, waited for it (about 70 ms in a fresh renderer). Xvnc (TigerVNC) sends no
 * H.264, so the Screen webview does not offer it and skips the probe.
 */
const H264_PROBE = 'supportsWebCodecsH264Decode = await _checkWebCodecsH264DecodeSupport();';
const noH264Probe = {
  name: 'no-h264-probe',
  setup(b) {
    b.onLoad({ filter: /@novnc[\\/]novnc[\\/]core[\\/]util[\\/]browser\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      if (!source.includes(H264_PROBE)) {
        throw new Error(`${args.path}: noVNC's H.264 probe changed; update esbuild.mjs`);
      }
      return { contents: source.replace(H264_PROBE, 'supportsWebCodecsH264Decode = false;'), loader: 'js' };
    });
  },
};

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
  // The flight recorder's own process (src/core/recorderProcess.ts forks it).
  build({
    ...common,
    entryPoints: ['src/core/recorderProcessMain.ts'],
    outfile: 'dist/recorder.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    loader: textFiles,
  }),
  // The direct channel's bridge process (src/core/bridgeProcess.ts forks it).
  build({
    ...common,
    entryPoints: ['src/core/bridgeProcessMain.ts'],
    outfile: 'dist/bridge.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    loader: textFiles,
  }),
  build({
    ...common,
    entryPoints: ['webview/main.ts'],
    outfile: 'dist/webview.js',
    plugins: [noH264Probe],
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
