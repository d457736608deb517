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
 * The one text message from the server: VS Code says the viewer shows again. It goes on the
 * socket, which bypasses the workbench: on a loaded machine VS Code's own message (the host's
 * `visible`) reached a revealed webview 150–660 ms after the click, this one 90–170 ms after
 * it. The webview resumes its paused RFB session on it (webview/rfbPause.ts).
 */
export const SHOWN_MESSAGE = 'shown';
