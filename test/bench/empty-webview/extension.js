// Benchmark only (test/bench/same-run.bench.mjs), never shipped: a command that opens an empty
// webview panel in the editor area, the way Bot Screen opens its Screen panel (scripts on, its
// context kept while hidden, a strict CSP with a nonce), whose only script records when it ran and
// posts a message. The time from the palette to that script is VS Code's own webview boot, the
// part of Bot Screen's open that no change to Bot Screen can remove. A second command opens the
// same panel drawing animation.js, the canvas animation the benchmark also draws in a plain tab.
// It activates on startup, as Bot Screen is already active when its open is timed.
const vscode = require('vscode');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

exports.activate = (context) => {
  const animation = fs.readFileSync(path.join(__dirname, 'animation.js'), 'utf8');
  context.subscriptions.push(
    vscode.commands.registerCommand('botScreenBench.emptyWebview', () => open(context, 'Empty Webview', '')),
    vscode.commands.registerCommand('botScreenBench.animatedWebview', () => open(context, 'Animated Webview', animation)),
  );
};

function open(context, title, script) {
  const panel = vscode.window.createWebviewPanel('botScreenBench.empty', title, vscode.ViewColumn.Active,
    { enableScripts: true, retainContextWhenHidden: true });
  const nonce = crypto.randomBytes(16).toString('base64');
  // The wall-clock time the script ran, kept in the frame for the benchmark to read (it never
  // times anything by polling) and posted back, as a webview that boots tells its extension.
  panel.webview.html = `<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'nonce-${nonce}';">
</head><body><script nonce="${nonce}">
window.__emptyWebviewBootedAt = performance.timeOrigin + performance.now();
acquireVsCodeApi().postMessage({ booted: window.__emptyWebviewBootedAt });
${script}
</script></body></html>`;
  panel.webview.onDidReceiveMessage(() => { /* the boot message: nothing to do */ }, undefined, context.subscriptions);
}

exports.deactivate = () => {};
