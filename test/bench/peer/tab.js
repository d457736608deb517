// Peer B of the same-run benchmark: the same noVNC (node_modules/@novnc/novnc, bundled and
// minified by esbuild like the extension's webview) in a plain page, connected straight to
// websockify, with the options the extension's webview sets. The WebSocket token comes in the
// page's fragment (never sent to the server with the page request).
import RFB from '@novnc/novnc';

const token = new URLSearchParams(location.hash.slice(1)).get('token');
const url = `ws://${location.host}/?token=${encodeURIComponent(token)}`;
const rfb = new RFB(document.getElementById('screen'), url, { shared: true });
rfb.scaleViewport = true;
rfb.resizeSession = false;
rfb.viewOnly = false;
window.benchTab = { rfb };
