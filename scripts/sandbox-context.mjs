// The sandbox image's build context (sandbox/) and the one definition of its default tag:
// `bot-screen-sandbox:<first 12 hex of the context's content hash>`. esbuild.mjs bakes the tag
// into the extension and scripts/build-sandbox-image.sh tags the test rig's build with it, so the
// product and the suite name the same image. Run directly, it prints the tag (or, with --hash,
// the full hash) for the context next to this script.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const IMAGE_REPOSITORY = 'bot-screen-sandbox';
export const CONTEXT_DIR = resolve(fileURLToPath(new URL('../sandbox', import.meta.url)));

/** Every file of the context, as sorted `/`-separated relative paths (what `docker build` sends). */
function contextFiles(dir) {
  const files = [];
  const walk = (at) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const full = join(at, entry.name);
      if (entry.isDirectory()) {
        walk(full);
      } else if (entry.isFile()) {
        files.push(relative(dir, full).split(sep).join('/'));
      } else {
        // A symlink or special file would make the hash depend on what lies outside the context.
        throw new Error(`${full}: the sandbox build context holds only plain files and folders`);
      }
    }
  };
  walk(dir);
  return files.sort();
}

/** sha256 over each file's path, executable bit, length and bytes, in path order. */
export function contextHash(dir = CONTEXT_DIR) {
  const hash = createHash('sha256');
  for (const file of contextFiles(dir)) {
    const full = join(dir, file);
    const bytes = readFileSync(full);
    const exec = statSync(full).mode & 0o111 ? 'x' : '-';
    hash.update(`${file}\0${exec}\0${bytes.length}\0`).update(bytes);
  }
  return hash.digest('hex');
}

export function imageTag(dir = CONTEXT_DIR) {
  return `${IMAGE_REPOSITORY}:${contextHash(dir).slice(0, 12)}`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${process.argv.includes('--hash') ? contextHash() : imageTag()}\n`);
}
