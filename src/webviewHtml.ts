// The Screen webview's HTML and its content security policy.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as vscode from 'vscode';

/** Where the webview may load files from: the bundle and the stylesheet, nothing else. */
export function webviewRoots(extensionUri: vscode.Uri): vscode.Uri[] {
  return [vscode.Uri.joinPath(extensionUri, 'dist'), vscode.Uri.joinPath(extensionUri, 'media')];
}

/**
 * The Screen page. Its script and styles are inlined under the page's nonce (see `inline` below).
 * The chrome (header, actions, detail, control bar) sits above the stage; the keyboard bar
 * floats inside the stage, so showing it never moves the canvas (webview/stableLayout.ts).
 * `directOrigins` are the direct channel's `ws://host:port` addresses, when there is one.
 */
export function screenHtml(webview: vscode.Webview, extensionUri: vscode.Uri, title: string, directOrigins: readonly string[] = []): string {
  return webviewPage(webview, extensionUri, {
    early: EARLY_READY,
    script: 'webview.js',
    styles: ['screen.css', 'overlay.css'],
    inline: true,
    title,
    csp: [
      `font-src ${webview.cspSource}`,
      // The direct channel (src/core/directChannel.ts): exactly its origins, nothing else.
      ...(directOrigins.length > 0 ? [`connect-src ${directOrigins.join(' ')}`] : []),
    ],
    body: `<div class="chrome" id="chrome">
<header class="bar">
  <div class="where" id="where"></div>
  <span class="badge" id="badge"></span>
  <button id="connection-toggle" class="icon" aria-expanded="false" aria-controls="connection"><svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true"><circle cx="8" cy="8" r="6.5" fill="none" stroke="currentColor"/><rect x="7.4" y="7" width="1.2" height="4.5" fill="currentColor"/><circle cx="8" cy="5" r="0.8" fill="currentColor"/></svg></button>
</header>
<div class="actions" id="actions"></div>
<div class="detail" id="detail" hidden></div>
<div class="control" id="control" hidden><span id="control-text"></span><button id="control-button" class="secondary"></button></div>
</div>
<div class="stage" id="stage">
<main class="screen" id="screen" tabindex="-1"></main>
<div class="keyboard" id="keyboard" hidden><span id="keyboard-text"></span><button id="release" class="secondary"></button></div>
</div>
<div class="announce" id="announce" role="status" aria-live="polite" aria-atomic="true"></div>
<section class="connection" id="connection" role="region" tabindex="-1" hidden><dl id="connection-stats"></dl></section>
`,
  });
}

/**
 * The Screen page's first script, run as the page is parsed: it says `ready` before the bundle
 * (noVNC and the view, a module the browser parses and runs only after the document) has run, so
 * the host's hello and the session's address are on their way meanwhile. It keeps the webview API
 * (which can be acquired once) and the messages that arrive before the bundle listens, for
 * webview/main.ts to take (`EarlyReady` there). The origin is the one `connect` sends for a new
 * document, so the direct channel's offer is bound to it as before.
 */
const EARLY_READY = `(() => {
  const api = acquireVsCodeApi();
  const queued = [];
  const listener = (event) => queued.push(event);
  window.addEventListener('message', listener);
  window.botScreenEarly = { api, queued, listener };
  api.postMessage({ type: 'ready', origin: location.origin });
})();`;

/**
 * One of our pages: the bundle `dist/<script>` under a nonce (and `early`, a classic script run
 * before the document is parsed further), the stylesheets `media/<styles>`, and a
 * CSP that allows nothing else but `csp`'s extra directives. `img-src data:` is load-bearing for
 * every page that runs noVNC: it draws Tight-JPEG rectangles through data: URLs, and without it
 * the canvas freezes silently.
 *
 * `inline`: the script and the styles go into the page itself, under the same nonce. A webview
 * fetches each of its files through VS Code's service worker and the workbench (in a served
 * window, from the server): that took about 120 ms of the Screen panel's open, after VS Code's own
 * boot of the webview, before its script could start. Files that cannot be inlined safely (one
 * holding `</script` or `<!--`, or unreadable) are linked as usual.
 */
export function webviewPage(
  webview: vscode.Webview,
  extensionUri: vscode.Uri,
  page: { script: string; styles: readonly string[]; title: string; csp: readonly string[]; body: string; inline?: boolean; early?: string },
): string {
  const nonce = randomBytes(18).toString('base64');
  const scriptText = page.inline ? inlinable(extensionUri, 'dist', page.script) : undefined;
  const styleTexts = page.styles.map((style) => ({ style, text: page.inline ? inlinable(extensionUri, 'media', style) : undefined }));
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${webview.cspSource}${page.inline ? ` 'nonce-${nonce}'` : ''}`,
    `img-src ${webview.cspSource} data:`,
    ...page.csp,
  ].join('; ');
  const styles = styleTexts.map(({ style, text }) =>
    text !== undefined
      ? `<style nonce="${nonce}">${text}</style>`
      : `<link rel="stylesheet" href="${webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', style))}">`,
  );
  const script =
    scriptText !== undefined
      ? `<script type="module" nonce="${nonce}">${scriptText}</script>`
      : `<script type="module" nonce="${nonce}" src="${webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', page.script))}"></script>`;
  return `<!DOCTYPE html>
<html lang="${vscode.env.language}">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
${page.early !== undefined ? `<script nonce="${nonce}">${page.early}</script>\n` : ''}${styles.join('\n')}
<title>${escapeHtml(page.title)}</title>
</head>
<body>
${page.body}${script}
</body>
</html>`;
}

/** Files read for inlining, by path (the extension's files do not change while it runs). */
const inlined = new Map<string, string | undefined>();

/** The text of the extension's file `dir/name` when it can stand inside a `<script>` or `<style>` element; else undefined. */
function inlinable(extensionUri: vscode.Uri, dir: string, name: string): string | undefined {
  const file = vscode.Uri.joinPath(extensionUri, dir, name).fsPath;
  if (!inlined.has(file)) {
    let text: string | undefined;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      text = undefined;
    }
    // Either sequence would end the element early or change how the HTML parser reads it.
    inlined.set(file, text !== undefined && !/<\/(script|style)|<!--/i.test(text) ? text : undefined);
  }
  return inlined.get(file);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
