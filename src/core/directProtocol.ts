// What both ends of the direct channel (./directChannel.ts and webview/transport.ts) agree on,
// in a module with no Node import so the webview bundle can share it.

/**
 * The subprotocol the webview asks for and the server names in its answer: how the webview knows
 * it reached our server and not whatever else answers at an address (a server that accepts every
 * upgrade itself where a port forwarder was expected, say).
 */
export const SUBPROTOCOL = 'botscreen.rfb';

/**
 * Flow control: binary messages carry RFB bytes both ways; a text message from the webview says
 * how many of the server's bytes it has handed to noVNC since its last such message (decimal
 * digits, nothing else). The server keeps at most a window of unacknowledged bytes on the way,
 * so the kernel's and the browser's socket buffers never hold seconds of stale screen: a viewer
 * hidden (or lagging) gets no more than the window after the host stops reading the relay.
 */
export function ackMessage(bytes: number): string {
  return String(bytes);
}

/** The byte count of an acknowledgement, or undefined when the text is not one. */
export function parseAck(text: string): number | undefined {
  return /^[0-9]{1,10}$/.test(text) ? Number(text) : undefined;
}

/**
 * The server's text messages: VS Code's visibility of the viewer, `shown <n>` or `hidden <n>`, `n`
 * counting the host's visibility changes (the same count goes with its `visible` post). They go on
 * the socket, which bypasses the workbench: on a loaded machine VS Code's own message (the host's
 * `visible`) reached a revealed webview 150–660 ms after the click, this one 90–170 ms after it;
 * a hidden one 0.8–2 s after the hide, while the server went on streaming into a relay the host
 * then stopped reading, so the reveal first drew hundreds of kB of stale updates. The webview
 * pauses and resumes its RFB session on them (webview/rfbPause.ts) and, by the count, ignores the
 * post of a change it already applied from the socket when a later change came meanwhile.
 */
export function visibilityMessage(shown: boolean, seq: number): string {
  return `${shown ? 'shown' : 'hidden'} ${seq}`;
}

/** The visibility a server text message says, or undefined when it is not one. */
export function parseVisibility(text: string): { shown: boolean; seq: number } | undefined {
  const match = /^(shown|hidden) ([0-9]{1,10})$/.exec(text);
  return match ? { shown: match[1] === 'shown', seq: Number(match[2]) } : undefined;
}
