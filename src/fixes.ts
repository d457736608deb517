/**
 * Which buttons fix which problem: one table from every problem kind to its fixes, in the order
 * they are offered. Free of `vscode` (labels come in as strings) so a plain Node test can check
 * that no kind is left without a fix; src/problemUi.ts shows and runs them.
 */
import { parseBackend } from './core/placement';
import { problemSetting, type Problem, type ProblemCode } from './core/problem';

/** Where to read how to start the Docker daemon, and how to install the engine. */
export const START_DOCKER_URL = 'https://docs.docker.com/engine/daemon/start/';
export const INSTALL_DOCKER_URL = 'https://docs.docker.com/engine/install/';
/** Contributed by the image builder; invoked by id only. */
export const BUILD_IMAGE_COMMAND = 'botScreen.buildImage';

export type Fix =
  /** The settings editor filtered to exactly this setting. */
  | { readonly kind: 'openSettings'; readonly setting: string }
  /** Runs the action that failed again (Start unless the caller says otherwise). */
  | { readonly kind: 'retry' }
  | { readonly kind: 'buildImage' }
  | { readonly kind: 'startDocker' }
  | { readonly kind: 'installDocker' }
  /** A modal that explains, then writes `botScreen.placement: gateway` to the user settings. */
  | { readonly kind: 'allowHost' }
  | { readonly kind: 'installHostDesktop' }
  /** Restricted Mode: VS Code's own workspace-trust editor. */
  | { readonly kind: 'manageTrust' }
  | { readonly kind: 'showLogs' };

export type FixKind = Fix['kind'];

/** One label per kind of fix, in the user's language. */
export type FixStrings = { readonly [K in FixKind]: string };

type FixTable = { readonly [C in ProblemCode]: (problem: Extract<Problem, { code: C }>) => Fix[] };

const retry: Fix = { kind: 'retry' };
const showLogs: Fix = { kind: 'showLogs' };
const settingOf = (problem: Problem): Fix[] => {
  const setting = problemSetting(problem);
  return setting ? [{ kind: 'openSettings', setting }] : [];
};
/** Docker and Podman create their sandbox from an image this extension can build. */
const buildsImages = (setting: string | undefined) => /^botScreen\.sandbox\.(docker|podman)\.image$/.test(setting ?? '');

const FIXES: FixTable = {
  // An unknown backend name cannot be allowed anywhere: the backend setting is the fix.
  refused: (p) =>
    parseBackend(p.backend).unknown === undefined
      ? [{ kind: 'allowHost' }, { kind: 'openSettings', setting: 'botScreen.sandbox.backend' }]
      : [{ kind: 'openSettings', setting: 'botScreen.sandbox.backend' }],
  cliMissing: (p) => [...settingOf(p), ...(/docker|podman/.test(p.setting) ? [{ kind: 'installDocker' } as const] : []), retry],
  daemonDown: () => [{ kind: 'startDocker' }, retry, showLogs],
  badImage: (p) => settingOf(p),
  badGeometry: (p) => settingOf(p),
  badContainer: (p) => settingOf(p),
  imageUnavailable: (p) => [...(buildsImages(p.setting) ? [{ kind: 'buildImage' } as const] : []), ...settingOf(p), retry, showLogs],
  containerNotRunning: (p) => [retry, ...settingOf(p)],
  missingBinaries: (p) =>
    p.onHost
      ? [{ kind: 'installHostDesktop' }, retry, showLogs]
      : [...(buildsImages(p.setting) ? [{ kind: 'buildImage' } as const] : []), ...settingOf(p), { kind: 'allowHost' }, showLogs],
  startTimeout: () => [showLogs, retry],
  sandboxGone: () => [retry],
  desktopStopped: () => [retry],
  sandboxUnknown: () => [retry, showLogs],
  notRunning: () => [retry],
  commandFailed: () => [retry, showLogs],
  badHost: (p) => (p.setting ? settingOf(p) : [showLogs]),
  badSshUser: (p) => settingOf(p),
  badPort: (p) => (p.setting ? settingOf(p) : [showLogs]),
  badIdentityFile: (p) => settingOf(p),
  unsafeControlDir: () => [retry, showLogs],
  sshFailed: (p) => [retry, ...settingOf(p), showLogs],
  badInstance: (p) => settingOf(p),
  badKubeName: (p) => settingOf(p),
  podNotSet: (p) => settingOf(p),
  podNotFound: (p) => [...settingOf(p), retry],
  podNotRunning: () => [retry, showLogs],
  // Not this version's own tag: the image setting names it; clearing it selects this version's.
  imageMissing: (p) => (p.buildable ? [{ kind: 'buildImage' }, showLogs] : [{ kind: 'openSettings', setting: 'botScreen.sandbox.docker.image' }, showLogs]),
  untrusted: () => [{ kind: 'manageTrust' }],
  // A person who said no needs nothing; asked again, the question comes back.
  needsConsent: () => [retry],
};

/** The fixes for a problem, most useful first (tests/unit/fixes.test.ts: never empty). */
export function fixesFor(problem: Problem): Fix[] {
  return (FIXES[problem.code] as (p: Problem) => Fix[])(problem);
}

export function fixLabel(fix: Fix, strings: FixStrings): string {
  return strings[fix.kind];
}
