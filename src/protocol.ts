/**
 * The one message protocol between the extension host and the Screen webview.
 * Shared by both sides (no `vscode` or DOM imports here). Every message has a `type`.
 *
 * Handshake: the webview posts `ready` when its script has loaded; the host answers with
 * `hello` (strings and the current status) and, when the screen runs, opens a session as for
 * `connect`. Later the webview posts `connect` whenever it wants an RFB stream; the host
 * answers `open` (relay running) or `closed`.
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
  readonly statTransport: string;
  /** The transport's two values: the direct channel, and VS Code's webview messages. */
  readonly transportDirect: string;
  readonly transportMessages: string;
  /** The badge while a dropped session is being replaced; `{0}` is the attempt number. */
  readonly reconnecting: string;
  /** The badge while a live session receives nothing; `{0}` is the number of seconds. */
  readonly stalled: string;
}

/** How a viewer draws the screen (webview/viewMode.ts): fit, one pixel per pixel, or resize the screen. */
export type ViewMode = 'fit' | 'actual' | 'resize';

/** Labels of the view mode buttons and the Send keys menu (src/screenOptions.ts localises them). */
export interface ScreenOptionStrings {
  readonly viewMode: string;
  readonly viewFit: string;
  readonly viewFitTitle: string;
  readonly viewActual: string;
  readonly viewActualTitle: string;
  readonly viewResize: string;
  readonly viewResizeTitle: string;
  readonly sendKeys: string;
  readonly sendKeysTitle: string;
  readonly sendKeysDisabled: string;
}

/**
 * One agent action as the live overlay draws it (webview/overlay.ts), sent as the action begins.
 * Points are screen pixels. Never the typed text: `words` says how much is typed, not what.
 */
export interface AgentMark {
  readonly kind: 'screenshot' | 'move' | 'click' | 'drag' | 'scroll' | 'type' | 'key' | 'openUrl' | 'wait';
  /** The pointer's target (move, click, scroll), or where a drag starts. */
  readonly at?: { readonly x: number; readonly y: number };
  /** Where a drag ends. */
  readonly to?: { readonly x: number; readonly y: number };
  readonly button?: 'left' | 'middle' | 'right';
  readonly double?: boolean;
  readonly direction?: 'up' | 'down' | 'left' | 'right';
  /** The action in a few words, in the user's language ("Typing 42 characters", "Pressing Ctrl+L"). */
  readonly words: string;
}

export type HostToWebview =
  | { readonly type: 'hello'; readonly strings: ViewStrings; readonly status: ScreenStatusView }
  | { readonly type: 'status'; readonly status: ScreenStatusView }
  /**
   * The relay is running: the webview may start its RFB session, on the direct channel at the
   * first of `urls` that answers as ours (one one-time token, at the end of each path), else over
   * postMessage.
   */
  | { readonly type: 'open'; readonly urls?: readonly string[] }
  /** RFB bytes from the sandbox, exact-size. */
  | { readonly type: 'rfb'; readonly data: Uint8Array }
  /** Who controls the screen, as this viewer sees it; `mine` means its input reaches the screen. */
  | { readonly type: 'control'; readonly label: string; readonly mine: boolean }
  /** The view mode setting and the labels of the view's screen options (after hello, and on change). */
  | { readonly type: 'options'; readonly viewMode: ViewMode; readonly strings: ScreenOptionStrings }
  /** A view mode picked in the view's title toolbar (src/commands/viewMode.ts), as if by its button. */
  | { readonly type: 'viewMode'; readonly mode: ViewMode }
  /** The relay ended; `reason` is shown to the user. */
  | { readonly type: 'closed'; readonly reason: string }
  /**
   * The clipboard's state (src/clipboard.ts): `label` is what the sharing button says ('' when the
   * setting shares nothing), shown while `shared`; forward the screen's copies only with `fromScreen`.
   */
  | { readonly type: 'clipboard'; readonly label: string; readonly title: string; readonly shared: boolean; readonly fromScreen: boolean }
  /** The VS Code clipboard, for noVNC to offer to the screen. */
  | { readonly type: 'clipboardToScreen'; readonly text: string }
  /** Whether the viewer is on screen: hidden, the host holds the bytes back, so silence means nothing. */
  /** `seq` counts the host's visibility changes, as its socket messages do (src/core/directProtocol.ts). */
  | { readonly type: 'visible'; readonly visible: boolean; readonly seq: number }
  /** How many viewers watch this screen (`label` says it in the user's language). */
  | { readonly type: 'viewers'; readonly count: number; readonly label: string }
  /** An agent action begins on this screen; `atMs` is the host's Date.now() as it begins (src/liveOverlay.ts). */
  | { readonly type: 'agentAction'; readonly mark: AgentMark; readonly atMs: number }
  /** Whether the live overlay is on (`botScreen.overlay.enabled`), and its toggle's label. */
  | { readonly type: 'overlay'; readonly enabled: boolean; readonly label: string };

export type WebviewToHost =
  /** `origin` as for `connect`: `ready` asks for a session too when the screen runs. */
  | { readonly type: 'ready'; readonly origin?: string }
  /** `origin`: the webview's own, when it would dial the direct channel; absent for postMessage. */
  | { readonly type: 'connect'; readonly origin?: string }
  | { readonly type: 'disconnect' }
  /** RFB bytes typed or clicked by the user. */
  | { readonly type: 'rfb'; readonly data: Uint8Array }
  | { readonly type: 'action'; readonly action: ViewAction }
  /** For tests and benchmarks: the first framebuffer update after connect was drawn. */
  | { readonly type: 'frame'; readonly atMs: number }
  /** Text copied on the screen (only while this view holds control and may take it). */
  | { readonly type: 'clipboardFromScreen'; readonly text: string }
  /** The view gained focus (`force` false) or its clipboard button was pressed: offer the VS Code clipboard. */
  | { readonly type: 'clipboardSync'; readonly force: boolean }
  /** Why the view's session watch acted (black screen, stall, reconnect), for the log. */
  | { readonly type: 'log'; readonly message: string }
  /** The view's overlay toggle was pressed: turn the live overlay on or off (the setting). */
  | { readonly type: 'overlay'; readonly enabled: boolean };

