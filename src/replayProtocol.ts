// The messages between the Open Recording panel (src/recordingPanel.ts) and its webview
// (webview/replay.ts).

/** The panel's words, translated on the host (the webview has no vscode.l10n). */
export interface ReplayStrings {
  readonly play: string;
  readonly pause: string;
  readonly empty: string;
  readonly exporting: string;
}

export type ReplayHostMessage =
  /** The segment files to fetch (webview URIs), oldest first. */
  | { readonly type: 'load'; readonly urls: readonly string[]; readonly strings: ReplayStrings }
  | { readonly type: 'seek'; readonly t: number }
  /** Starts a video export from the current position (what the button does; tests call it). */
  | { readonly type: 'exportVideo' };

export type ReplayWebviewMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'exportRaw' }
  /** A finished video export: WebM bytes, and how long it played. */
  | { readonly type: 'video'; readonly data: Uint8Array; readonly durationMs: number; readonly width: number; readonly height: number };
