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
  /**
   * The segment files to fetch (by name, at webview URIs), oldest first. `live`: the recording
   * may still be written; the webview answers `loaded` and the host then sends what it gains.
   */
  | { readonly type: 'load'; readonly files: readonly { readonly name: string; readonly url: string }[]; readonly live: boolean; readonly strings: ReplayStrings }
  /** Bytes appended to a segment file since (a file not loaded yet: all of it so far). */
  | { readonly type: 'append'; readonly name: string; readonly bytes: Uint8Array }
  /** Segment files the ring buffer dropped: their part of the timeline cannot be shown any more. */
  | { readonly type: 'dropped'; readonly names: readonly string[] }
  | { readonly type: 'seek'; readonly t: number }
  /** Starts a video export from the current position (what the button does; tests call it). */
  | { readonly type: 'exportVideo' };

export type ReplayWebviewMessage =
  | { readonly type: 'ready' }
  /** The files a live replay loaded, and how many bytes of each it read. */
  | { readonly type: 'loaded'; readonly files: readonly { readonly name: string; readonly bytes: number }[] }
  | { readonly type: 'exportRaw' }
  /** A finished video export: WebM bytes, and how long it played. */
  | { readonly type: 'video'; readonly data: Uint8Array; readonly durationMs: number; readonly width: number; readonly height: number };
