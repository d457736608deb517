/**
 * The one message protocol between the extension host and the Screen webview.
 * Shared by both sides (no `vscode` or DOM imports here). Every message has a `type`.
 *
 * Handshake: the webview posts `ready` when its script has loaded; the host answers with
 * `hello` (strings and the current status). Then the webview posts `connect` whenever it wants
 * an RFB stream; the host answers `open` (relay running) or `closed`.
 */

import type { ScreenState } from './core/screenState';

/** Where the screen is and what it is doing (core's states, named here for the webview). */
export type { ScreenState };

export interface ScreenStatusView {
  readonly state: ScreenState;
  /** The state in the user's language, for the badge. */
  readonly stateLabel: string;
  /** One sentence: where the screen runs (or why it cannot). */
  readonly headline: string;
  /** Extra detail: error text, blocker, log tail. Empty when there is nothing to say. */
  readonly detail: string;
  /** Actions the view may offer, in order. */
  readonly actions: readonly ViewAction[];
}

export type ViewAction =
  | 'start'
  | 'stop'
  | 'openInEditor'
  | 'installHostDesktop'
  | 'showLogs'
  | 'switchImage'
  | 'keepImage'
  | 'takeControl'
  | 'handBack'
  /** Fixes of the problem the view shows (src/fixes.ts); Retry is 'start'. */
  | 'openSettings'
  | 'buildImage'
  | 'startDocker'
  | 'installDocker'
  | 'allowHost'
  | 'manageTrust';

/** Labels the host localises for the webview (the webview has no access to vscode.l10n). */
export interface ViewStrings {
  readonly start: string;
  readonly stop: string;
  readonly openInEditor: string;
  readonly installHostDesktop: string;
  readonly showLogs: string;
  readonly switchImage: string;
  readonly keepImage: string;
  readonly takeControl: string;
  readonly handBack: string;
  readonly openSettings: string;
  readonly buildImage: string;
  readonly startDocker: string;
  readonly installDocker: string;
  readonly allowHost: string;
  readonly manageTrust: string;
  readonly releaseKeyboard: string;
  readonly keyboardCaptured: string;
  /** Announced when keys go back to VS Code (webview/a11y.ts). */
  readonly keyboardReleased: string;
  /** The canvas's accessible name: {0} the screen's state (the badge), {1} who holds control. */
  readonly screenLabel: string;
  readonly connecting: string;
  readonly live: string;
  /** The connection panel (webview/connectionPanel.ts): its button and its rows. */
  readonly connectionInfo: string;
  readonly notConnected: string;
  readonly disconnected: string;
  readonly statConnection: string;
  readonly statQuality: string;
  readonly statFrameRate: string;
  readonly statRate: string;
  readonly statTotal: string;
  readonly statFirstFrame: string;
  readonly statLastFrame: string;
  readonly statReconnects: string;
}

export type HostToWebview =
  | { readonly type: 'hello'; readonly strings: ViewStrings; readonly status: ScreenStatusView }
  | { readonly type: 'status'; readonly status: ScreenStatusView }
  /** The relay is running: the webview may start its RFB session. */
  | { readonly type: 'open' }
  /** RFB bytes from the sandbox, exact-size. */
  | { readonly type: 'rfb'; readonly data: Uint8Array }
  /** Who controls the screen, as this viewer sees it; `mine` means its input reaches the screen. */
  | { readonly type: 'control'; readonly label: string; readonly mine: boolean }
  /** The relay ended; `reason` is shown to the user. */
  | { readonly type: 'closed'; readonly reason: string };

export type WebviewToHost =
  | { readonly type: 'ready' }
  | { readonly type: 'connect' }
  | { readonly type: 'disconnect' }
  /** RFB bytes typed or clicked by the user. */
  | { readonly type: 'rfb'; readonly data: Uint8Array }
  | { readonly type: 'action'; readonly action: ViewAction }
  /** For tests and benchmarks: the first framebuffer update after connect was drawn. */
  | { readonly type: 'frame'; readonly atMs: number };

