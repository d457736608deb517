import type { StartQuestion } from './consent';

/**
 * Everything that can keep a screen from running, as data. The extension turns each into a
 * localised sentence; core code never writes user-facing prose.
 */
export type Problem =
  | { readonly code: 'refused'; readonly backend: string }
  | { readonly code: 'cliMissing'; readonly cli: string }
  | { readonly code: 'daemonDown'; readonly cli: string; readonly detail: string }
  | { readonly code: 'badImage'; readonly image: string }
  | { readonly code: 'badGeometry'; readonly geometry: string }
  | { readonly code: 'badContainer'; readonly container: string }
  /** The image is neither present nor pullable; `keptContainer` names the container left as it was. */
  | { readonly code: 'imageUnavailable'; readonly image: string; readonly detail: string; readonly keptContainer?: string }
  /** Bot Screen's own image (never pulled) is not built yet; `buildable` when it is this version's. */
  | { readonly code: 'imageMissing'; readonly image: string; readonly buildable: boolean; readonly keptContainer?: string }
  | { readonly code: 'containerNotRunning'; readonly container: string }
  | { readonly code: 'missingBinaries'; readonly onHost: boolean; readonly names: readonly string[] }
  | { readonly code: 'startTimeout'; readonly log: string }
  | { readonly code: 'sandboxGone' }
  | { readonly code: 'sandboxUnknown'; readonly name: string }
  | { readonly code: 'notRunning' }
  | { readonly code: 'commandFailed'; readonly what: string; readonly detail: string }
  | { readonly code: 'badHost'; readonly host: string }
  | { readonly code: 'badSshUser'; readonly user: string }
  | { readonly code: 'badPort'; readonly port: string }
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

export class ScreenError extends Error {
  constructor(readonly problem: Problem) {
    super(`${problem.code}: ${JSON.stringify(problem)}`);
    this.name = 'ScreenError';
  }
}
