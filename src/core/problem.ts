/**
 * Why a screen cannot run, as data (Problem), the error that carries it (ScreenError), and the
 * questions a start must ask first (StartQuestion, carried by a `needsConsent` problem).
 */

/** A decision a start must not take alone (see consent.ts), carried by a `needsConsent` problem. */
export type StartQuestion =
  /** Our container runs `currentImage`; the workspace settings ask for `image`. */
  | {
      readonly kind: 'replaceContainer';
      readonly backend: 'docker' | 'podman';
      readonly container: string;
      readonly currentImage: string;
      readonly image: string;
    }
  /** The workspace settings name an SSH host (`ssh://user@host:port`) the user has not approved. */
  | { readonly kind: 'newHost'; readonly host: string };

/**
 * Everything that can keep a screen from running, as data: a kind, the setting that fixes it
 * (by its full id) where one does, and the detail. The extension turns each into a localised
 * sentence and the buttons that fix it; core code never writes user-facing prose.
 */
export type Problem =
  | { readonly code: 'refused'; readonly backend: string }
  | { readonly code: 'cliMissing'; readonly cli: string; readonly setting: string }
  | { readonly code: 'daemonDown'; readonly cli: string; readonly detail: string }
  | { readonly code: 'badImage'; readonly image: string; readonly setting: string }
  | { readonly code: 'badGeometry'; readonly geometry: string }
  | { readonly code: 'badContainer'; readonly container: string; readonly setting: string }
  /** The image is neither present nor pullable; `keptContainer` names the container left as it was. */
  | { readonly code: 'imageUnavailable'; readonly image: string; readonly detail: string; readonly keptContainer?: string; readonly setting: string }
  /** Bot Screen's own image (never pulled) is not built yet; `buildable` when it is this version's. */
  | { readonly code: 'imageMissing'; readonly image: string; readonly buildable: boolean; readonly keptContainer?: string }
  | { readonly code: 'containerNotRunning'; readonly container: string; readonly setting: string }
  /** `setting` is the image setting of a backend that creates its sandbox from an image. */
  | { readonly code: 'missingBinaries'; readonly onHost: boolean; readonly names: readonly string[]; readonly setting?: string }
  | { readonly code: 'startTimeout'; readonly log: string }
  | { readonly code: 'sandboxGone' }
  /** The sandbox is there but the desktop in it is not running any more (Xvnc or its session ended). */
  | { readonly code: 'desktopStopped' }
  | { readonly code: 'sandboxUnknown'; readonly name: string }
  | { readonly code: 'notRunning' }
  | { readonly code: 'commandFailed'; readonly what: string; readonly detail: string }
  /** `setting` is absent when the value did not come from a setting (a forwarded address). */
  | { readonly code: 'badHost'; readonly host: string; readonly setting?: string }
  | { readonly code: 'badSshUser'; readonly user: string }
  | { readonly code: 'badPort'; readonly port: string; readonly setting?: string }
  | { readonly code: 'badIdentityFile'; readonly path: string }
  | { readonly code: 'unsafeControlDir'; readonly path: string }
  | { readonly code: 'sshFailed'; readonly host: string; readonly detail: string }
  | { readonly code: 'badInstance'; readonly instance: string }
  | { readonly code: 'badKubeName'; readonly kind: 'pod' | 'namespace' | 'container' | 'context'; readonly value: string }
  | { readonly code: 'podNotSet' }
  | { readonly code: 'podNotFound'; readonly pod: string; readonly namespace: string }
  | { readonly code: 'podNotRunning'; readonly pod: string; readonly phase: string }
  /** The workspace is not trusted (Restricted Mode): nothing runs. */
  | { readonly code: 'untrusted' }
  /** A start needs a person's yes (`declined`: they said no; else nobody could be asked). */
  | { readonly code: 'needsConsent'; readonly question: StartQuestion; readonly declined: boolean };

export type ProblemCode = Problem['code'];

/** Every kind, at run time (the object form makes the compiler insist on each one). */
export const PROBLEM_CODES = Object.keys({
  refused: true, cliMissing: true, daemonDown: true, badImage: true, badGeometry: true, badContainer: true,
  imageUnavailable: true, containerNotRunning: true, missingBinaries: true, startTimeout: true, sandboxGone: true, desktopStopped: true,
  sandboxUnknown: true, notRunning: true, commandFailed: true, badHost: true, badSshUser: true, badPort: true,
  badIdentityFile: true, unsafeControlDir: true, sshFailed: true, badInstance: true, badKubeName: true,
  podNotSet: true, podNotFound: true, podNotRunning: true, imageMissing: true, untrusted: true, needsConsent: true,
} satisfies Record<ProblemCode, true>) as ProblemCode[];

/** The full id of one backend's setting, e.g. `botScreen.sandbox.podman.path`. */
export function backendSetting(backend: string, key: 'path' | 'image' | 'container' | 'host' | 'port'): string {
  return `botScreen.sandbox.${backend}.${key}`;
}

/** The setting whose value caused the problem, or undefined when no setting did. */
export function problemSetting(problem: Problem): string | undefined {
  switch (problem.code) {
    case 'cliMissing':
    case 'badImage':
    case 'badContainer':
    case 'imageUnavailable':
    case 'containerNotRunning':
    case 'missingBinaries':
    case 'badHost':
    case 'badPort':
      return problem.setting;
    case 'refused':
      return 'botScreen.placement';
    case 'badGeometry':
      return 'botScreen.screen.geometry';
    case 'badSshUser':
      return 'botScreen.sandbox.ssh.user';
    case 'badIdentityFile':
      return 'botScreen.sandbox.ssh.identityFile';
    case 'sshFailed':
      return 'botScreen.sandbox.ssh.host';
    case 'badInstance':
      return 'botScreen.sandbox.apptainer.instance';
    case 'badKubeName':
      return `botScreen.sandbox.kubernetes.${problem.kind}`;
    case 'podNotSet':
    case 'podNotFound':
      return 'botScreen.sandbox.kubernetes.pod';
    default:
      return undefined;
  }
}

export class ScreenError extends Error {
  constructor(readonly problem: Problem) {
    super(`${problem.code}: ${JSON.stringify(problem)}`);
    this.name = 'ScreenError';
  }
}

/** The text of anything thrown: an Error's message, else the value itself. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Anything thrown, as a problem: a ScreenError's own, else `what` failed with the error's
 * message: how anything thrown becomes what the user is told (problemMessage words it).
 */
export function problemOf(err: unknown, what: string): Problem {
  return err instanceof ScreenError ? err.problem : { code: 'commandFailed', what, detail: errorMessage(err) };
}
