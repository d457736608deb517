// What both ends of the direct channel (./directChannel.ts and webview/transport.ts) agree on,
// in a module with no Node import so the webview bundle can share it.

/**
 * The subprotocol the webview asks for and the server names in its answer: how the webview knows
 * it reached our server and not whatever else answers at an address (a server that accepts every
 * upgrade itself where a port forwarder was expected, say).
 */
export const SUBPROTOCOL = 'botscreen.rfb';
