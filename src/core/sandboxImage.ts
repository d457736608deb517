/**
 * The sandbox desktop image Bot Screen builds itself: its local tag (from the content hash of the
 * build context shipped in the VSIX, computed by scripts/sandbox-context.mjs at bundle time), the
 * parser of `docker build` / `podman build` step lines, and the build runner with cancel.
 */
import { execa } from 'execa';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { engineCli } from './backends/dockerCli';
import type { Command } from './command';
import { run } from './runner';

declare const __BOTSCREEN_SANDBOX_IMAGE__: string;
declare const __BOTSCREEN_SANDBOX_HASH__: string;

/** The default image: a local tag, built here and never pulled (nobody else can publish it). */
export const SANDBOX_IMAGE: string = __BOTSCREEN_SANDBOX_IMAGE__;
/** The full content hash of the build context, recorded as a label on the image. */
export const SANDBOX_CONTEXT_HASH: string = __BOTSCREEN_SANDBOX_HASH__;
const SANDBOX_REPOSITORY = 'bot-screen-sandbox';
/** The build's base when the user names none: Debian's own slim image. */
export const DEFAULT_BASE_IMAGE = 'debian:bookworm-slim';
export const DEFAULT_DEBIAN_MIRROR = 'http://deb.debian.org/debian';
export const DEFAULT_DEBIAN_SECURITY_MIRROR = 'http://deb.debian.org/debian-security';
const LABEL_CONTEXT = 'dev.botscreen.context';
const LABEL_BASE = 'dev.botscreen.base';

/**
 * Our own local tags (this version's or an earlier one's). A registry name is never used for
 * them: whoever published one could get their image run as the sandbox.
 */
export function isOwnImage(image: string): boolean {
  return image.startsWith(`${SANDBOX_REPOSITORY}:`) || image.startsWith(`localhost/${SANDBOX_REPOSITORY}:`);
}

export interface BuildStep {
  readonly step: number;
  readonly total: number;
  /** The Dockerfile instruction, whitespace collapsed (`RUN set -eux; …`). */
  readonly instruction: string;
}

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;
const STEP_LINES = [
  // The classic builder (DOCKER_BUILDKIT=0): `Step 3/13 : RUN …`.
  /^Step (\d+)\/(\d+) : (.*)$/,
  // Podman (buildah): `STEP 3/13: RUN …`, in multi-stage builds prefixed with `[1/2] `.
  /^(?:\[\d+\/\d+\] )?STEP (\d+)\/(\d+): (.*)$/,
  // BuildKit's plain progress, should a CLI ignore DOCKER_BUILDKIT=0: `#7 [3/5] RUN …`.
  /^#\d+ \[(?:[\w.-]+ )?(\d+)\/(\d+)\] (.*)$/,
];

/** The step a build output line announces, if it announces one. */
export function parseBuildStep(line: string): BuildStep | undefined {
  const text = line.replace(ANSI, '').trim();
  for (const pattern of STEP_LINES) {
    const match = pattern.exec(text);
    if (match) {
      const step = Number(match[1]);
      const total = Number(match[2]);
      if (step >= 1 && step <= total) {
        return { step, total, instruction: match[3].replace(/\s+/g, ' ').trim() };
      }
    }
  }
  return undefined;
}

export interface BuildOptions {
  readonly cli: string;
  readonly flavour: 'docker' | 'podman';
  readonly contextDir: string;
  /** The tag the image gets, only once the build succeeded. */
  readonly tag: string;
  readonly contextHash: string;
  readonly base: string;
  readonly debianMirror: string;
  readonly debianSecurityMirror: string;
  readonly noCache: boolean;
  /** Every output line (stdout and stderr, colour codes removed), for the log. */
  readonly onLine: (line: string) => void;
  readonly onStep: (step: BuildStep) => void;
}

export type BuildResult =
  | { readonly status: 'built'; readonly imageId: string }
  | { readonly status: 'cancelled' }
  | { readonly status: 'failed'; readonly exitCode: number | undefined; readonly lastLines: readonly string[] };

export interface BuildHandle {
  readonly done: Promise<BuildResult>;
  /** Stops the build: the CLI is ended, so the engine abandons the build and nothing is tagged. */
  cancel(): void;
}

const KEEP_LINES = 40;

/**
 * The argv of one build. It builds untagged (`--iidfile`): the tag is set only after success, so
 * a cancelled or failed build can never leave the tag on a half-made image. `--force-rm` removes
 * the intermediate container of a failed step too. The labels come last in the classic builder,
 * so they do not spoil the cache of the steps before them.
 */
export function buildCommand(options: BuildOptions, iidFile: string): Command {
  return {
    command: options.cli,
    args: [
      'build', '--force-rm', '--iidfile', iidFile,
      ...(options.noCache ? ['--no-cache'] : []),
      '--build-arg', `BASE_IMAGE=${options.base}`,
      '--build-arg', `DEBIAN_MIRROR=${options.debianMirror}`,
      '--build-arg', `DEBIAN_SECURITY_MIRROR=${options.debianSecurityMirror}`,
      '--label', `${LABEL_BASE}=${options.base}`,
      '--label', `${LABEL_CONTEXT}=${options.contextHash}`,
      '--file', join(options.contextDir, 'Dockerfile'),
      '--', options.contextDir,
    ],
  };
}

export function startBuild(options: BuildOptions): BuildHandle {
  let cancelled = false;
  let kill: (() => void) | undefined;
  const done = (async (): Promise<BuildResult> => {
    const dir = await mkdtemp(join(tmpdir(), 'botscreen-build-'));
    try {
      const before = await imageId(options.cli, options.flavour, options.tag);
      const { exitCode, lastLines } = await runBuild(options, join(dir, 'iid'), (k) => {
        kill = k;
        if (cancelled) {
          k();
        }
      });
      if (cancelled) {
        return { status: 'cancelled' };
      }
      const built = exitCode === 0 ? bareId(await readFile(join(dir, 'iid'), 'utf8').catch(() => '')) : '';
      if (!built) {
        return { status: 'failed', exitCode, lastLines };
      }
      const tagged = await run({ command: options.cli, args: ['tag', built, options.tag] }, { timeoutMs: 60_000 });
      if (tagged.exitCode !== 0) {
        return { status: 'failed', exitCode: tagged.exitCode, lastLines: [...lastLines, ...tagged.stderr.trim().split('\n')].slice(-KEEP_LINES) };
      }
      options.onLine(`tagged ${built} as ${options.tag}`);
      if (before && before !== built) {
        await dropUntagged(options, before);
      }
      return { status: 'built', imageId: built };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  })();
  return {
    done,
    cancel: () => {
      cancelled = true;
      kill?.();
    },
  };
}

async function runBuild(
  options: BuildOptions,
  iidFile: string,
  onKill: (kill: () => void) => void,
): Promise<{ exitCode: number | undefined; lastLines: string[] }> {
  const cmd = buildCommand(options, iidFile);
  const lastLines: string[] = [];
  const line = (text: string) => {
    const clean = text.replace(ANSI, '').replace(/\s+$/, '');
    // A progress bar redraws with \r: what counts is what the line ends as.
    const shown = clean.slice(clean.lastIndexOf('\r') + 1);
    if (!shown) {
      return;
    }
    lastLines.push(shown);
    if (lastLines.length > KEEP_LINES) {
      lastLines.shift();
    }
    options.onLine(shown);
    const step = parseBuildStep(shown);
    if (step) {
      options.onStep(step);
    }
  };
  // The classic builder: its "Step N/M : …" lines are what the progress shows, and no buildx is
  // needed. Podman ignores the variable.
  const child = execa(cmd.command, [...cmd.args], {
    reject: false,
    buffer: false,
    stdin: 'ignore',
    env: { DOCKER_BUILDKIT: '0', LC_ALL: 'C' },
  });
  onKill(() => {
    child.kill('SIGTERM');
    // A CLI that does not end on TERM is ended for sure.
    setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
  });
  const pump = (stream: NodeJS.ReadableStream | null) =>
    new Promise<void>((resolve) => {
      if (!stream) {
        resolve();
        return;
      }
      let rest = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        const parts = (rest + chunk).split('\n');
        rest = parts.pop() ?? '';
        parts.forEach(line);
      });
      stream.on('end', () => {
        line(rest);
        resolve();
      });
      stream.on('error', () => resolve());
    });
  const [result] = await Promise.all([child, pump(child.stdout), pump(child.stderr)]);
  const spawnError = (result as { code?: unknown }).code;
  if (typeof spawnError === 'string' && result.exitCode === undefined) {
    line(`${cmd.command}: ${spawnError}`);
  }
  return { exitCode: result.exitCode ?? undefined, lastLines };
}

/** The id of an image in the engine's store, or undefined when it has none of that name. */
export async function imageId(cli: string, engine: 'docker' | 'podman', image: string): Promise<string | undefined> {
  const result = await run(engineCli(cli, engine).imageExists(image), { timeoutMs: 30_000 });
  return result.exitCode === 0 ? bareId(result.stdout) || undefined : undefined;
}

/** Docker writes ids as `sha256:…`, Podman's inspect without the prefix: compare them bare. */
function bareId(id: string): string {
  return id.trim().replace(/^sha256:/, '');
}

/**
 * The image our tag named before a rebuild, removed only when no tag names it any more (it was
 * ours, and now nobody can reach it). Without force: an image a container still uses stays.
 */
async function dropUntagged(options: BuildOptions, id: string): Promise<void> {
  const tags = await run({ command: options.cli, args: ['image', 'inspect', '--format', '{{len .RepoTags}}', '--', id] }, { timeoutMs: 30_000 });
  if (tags.exitCode === 0 && tags.stdout.trim() === '0') {
    const removed = await run({ command: options.cli, args: ['image', 'rm', '--', id] }, { timeoutMs: 120_000 });
    options.onLine(removed.exitCode === 0 ? `removed the previous build ${id}` : `kept the previous build ${id}: ${removed.stderr.trim()}`);
  }
}
