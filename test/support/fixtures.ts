import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Words that break naive quoting: quotes, spaces, $, backticks, newlines, globs, dashes, non-ASCII. */
export function nastyWords(count: number, seed = 7): string[] {
  const pieces = ["'", '"', ' ', '$', '$(id)', '`id`', '\n', '\t', '\\', '*', '?', '[a]', '-', '--x', ';', '&', '|', '>', '<', '!', '#', '~', '{a,b}', 'é', '日本', '🙂', '%s', '=', ''];
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state;
  };
  const words = ['', ' ', "'", '-n', '-e', '--', '$HOME', '`whoami`', 'a\nb'];
  while (words.length < count) {
    const length = next() % 6;
    let word = '';
    for (let i = 0; i < length; i++) {
      word += pieces[next() % pieces.length] + (next() % 3 === 0 ? 'x' : '');
    }
    words.push(word);
  }
  return words;
}

export interface FakeCli {
  /** The program to put in a backend's path setting. */
  readonly path: string;
  /** Every invocation's argv (without the program), oldest first. */
  calls(): string[][];
}

/**
 * A stand-in for a CLI that cannot run here (apptainer, kubectl): a bash script that records
 * its argv, then runs `body` (bash, with the original "$@").
 */
export function fakeCli(name: string, body: string): FakeCli {
  const dir = mkdtempSync(join(tmpdir(), `botscreen-fake-${name}-`));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, 'calls');
  const path = join(dir, name);
  writeFileSync(log, '');
  writeFileSync(path, `#!/bin/bash\n{ printf '%s\\0' "$@"; printf '\\1'; } >>'${log}'\n${body}\n`);
  chmodSync(path, 0o755);
  return {
    path,
    calls: () =>
      readFileSync(log, 'utf8')
        .split('\u0001')
        .slice(0, -1)
        .map((record) => record.split('\0').slice(0, -1)),
  };
}
