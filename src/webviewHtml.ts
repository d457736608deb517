// The Screen webview's HTML and its content security policy.
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';

/** Where the webview may load files from: the bundle and the stylesheet, nothing else. */
export function webviewRoots(extensionUri: vscode.Uri): vscode.Uri[] {
  return [vscode.Uri.joinPath(extensionUri, 'dist'), vscode.Uri.joinPath(extensionUri, 'media')];
}

/**
 * The Screen page. No inline style or script runs.
 * The chrome (header, actions, detail, control bar) sits above the stage; the keyboard bar
 * floats inside the stage, so showing it never moves the canvas (webview/stableLayout.ts).
 * `directOrigins` are the direct channel's `ws://host:port` addresses, when there is one.
 */
export function screenHtml(webview: vscode.Webview, extensionUri: vscode.Uri, title: string, directOrigins: readonly string[] = []): string {
  return webviewPage(webview, extensionUri, {
    script: 'webview.js',
    styles: ['screen.css', 'overlay.css'],
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
 * One of our pages: the bundle `dist/<script>` under a nonce, the stylesheets `media/<styles>`, and a
 * CSP that allows nothing else but `csp`'s extra directives. `img-src data:` is load-bearing for
 * every page that runs noVNC: it draws Tight-JPEG rectangles through data: URLs, and without it
 * the canvas freezes silently.
 */
export function webviewPage(
  webview: vscode.Webview,
  extensionUri: vscode.Uri,
  page: { script: string; styles: readonly string[]; title: string; csp: readonly string[]; body: string },
): string {
  const nonce = randomBytes(18).toString('base64');
  const script = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', page.script));
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
    ...page.csp,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="${vscode.env.language}">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
${page.styles.map((style) => `<link rel="stylesheet" href="${webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', style))}">`).join('\n')}
<title>${escapeHtml(page.title)}</title>
</head>
<body>
${page.body}<script type="module" nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
