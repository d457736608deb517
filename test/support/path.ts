import { mkdtempSync, readdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A PATH directory holding every program of /usr/bin and /bin except `without`: this machine as
 * it would be without those packages installed (nothing is faked: the rest are the real ones).
 */
export function pathWithout(without: readonly string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'botscreen-path-'));
  for (const source of ['/usr/bin', '/bin']) {
    for (const name of readdirSync(source)) {
      if (!without.includes(name)) {
        try {
          symlinkSync(join(source, name), join(dir, name));
        } catch {
          // the same name in /bin and /usr/bin: the first wins, as on PATH
        }
      }
    }
  }
  return dir;
}
