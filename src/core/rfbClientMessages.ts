// The RFB client messages that ask the server for pictures (RFC 6143 §7.5.3; EnableContinuousUpdates
// from the community extensions), both 10 bytes: a type, a flag, and a rectangle. One place for the
// recorder's client (./recorderRfb.ts), the webview's pause (webview/rfbPause.ts) and the host's
// hidden-read rule (./hiddenRead.ts). Free of Node and the DOM: both bundles use it.

export const FRAMEBUFFER_UPDATE_REQUEST = 3;
export const ENABLE_CONTINUOUS_UPDATES = 150;

/** One such message: `type`, `flag` (incremental / enable), and the rectangle at 0,0 of width × height. */
export function rectMessage(type: number, flag: number, width: number, height: number): Uint8Array {
  return new Uint8Array([type, flag, 0, 0, 0, 0, width >> 8, width & 0xff, height >> 8, height & 0xff]);
}

export function updateRequest(incremental: boolean, width: number, height: number): Uint8Array {
  return rectMessage(FRAMEBUFFER_UPDATE_REQUEST, incremental ? 1 : 0, width, height);
}

/** Whether `message` is one of these of `type`, with `flag`. */
export function isRectMessage(message: Uint8Array, type: number, flag: number): boolean {
  return message.length === 10 && message[0] === type && message[1] === flag;
}
