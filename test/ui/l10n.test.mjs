// Bot Screen speaks German in a real VS Code whose display language is German: the palette shows
// the command titles from package.nls.de.json, and the status bar the text from
// l10n/bundle.l10n.de.json (which VS Code loads only for an extension whose package.json names
// its "l10n" folder, from the VSIX the harness installs).
//
// The display language needs a language pack, and none can be installed offline. So the test
// installs one of its own that declares German and translates nothing of VS Code (the workbench
// stays English; only the language id matters), and records it in languagepacks.json the way
// VS Code does when a pack is installed from the Extensions view (a CLI install skips that step).
// The locale is chosen the way a user does (Configure Display Language writes argv.json).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import test from 'node:test';
import { REPO_ROOT, SERVER_MAIN, focusWorkbench, screenshot, waitFor } from './harness.mjs';
import { commandTitle, indicator, indicatorText, withWindow } from './botscreen.mjs';

const PACK_ID = 'botscreen-test.botscreen-test-language-pack-de';
const PACK_VERSION = '0.0.1';

async function buildLanguagePack(dir) {
  const src = path.join(dir, 'language-pack-de');
  await fs.mkdir(path.join(src, 'translations'), { recursive: true });
  await fs.writeFile(path.join(src, 'package.json'), JSON.stringify({
    name: 'botscreen-test-language-pack-de',
    displayName: 'Bot Screen test: German display language, no translations',
    description: 'Lets the l10n UI test switch VS Code to German; translates nothing of VS Code itself.',
    version: PACK_VERSION,
    publisher: 'botscreen-test',
    license: 'MIT',
    engines: { vscode: '^1.99.0' },
    categories: ['Language Packs'],
    contributes: {
      localizations: [{
        languageId: 'de',
        languageName: 'German',
        localizedLanguageName: 'Deutsch',
        translations: [{ id: 'vscode', path: './translations/main.i18n.json' }],
      }],
    },
  }));
  await fs.writeFile(path.join(src, 'translations', 'main.i18n.json'), JSON.stringify({ version: '1.0.0', contents: {} }));
  await fs.writeFile(path.join(src, 'LICENSE'), 'MIT\n');
  const vsix = path.join(dir, 'language-pack-de.vsix');
  execFileSync(path.join(REPO_ROOT, 'node_modules', '.bin', 'vsce'),
    ['package', '--allow-missing-repository', '--skip-license', '--out', vsix], { cwd: src, stdio: 'pipe' });
  return vsix;
}

async function installLanguagePack(server, vsix) {
  const out = execFileSync(process.execPath, [SERVER_MAIN, '--install-extension', vsix, '--force',
    '--user-data-dir', server.userDataDir, '--extensions-dir', server.extensionsDir], { encoding: 'utf8', timeout: 120_000 });
  assert.match(out, /successfully installed/i, out);
  const installed = (await fs.readdir(server.extensionsDir)).find((d) => d.startsWith(`${PACK_ID}-`));
  assert.ok(installed, `the language pack is in ${server.extensionsDir}`);
  // The record VS Code's language pack cache keeps (hash = md5 of id and version of its extensions).
  const record = {
    de: {
      hash: createHash('md5').update(PACK_ID).update(PACK_VERSION).digest('hex'),
      extensions: [{ extensionIdentifier: { id: PACK_ID }, version: PACK_VERSION }],
      translations: { vscode: path.join(server.extensionsDir, installed, 'translations', 'main.i18n.json') },
      label: 'Deutsch',
    },
  };
  await fs.writeFile(path.join(server.userDataDir, 'languagepacks.json'), JSON.stringify(record));
  await fs.writeFile(path.join(server.userDataDir, 'User', 'argv.json'), JSON.stringify({ locale: 'de' }));
}

test('with German as display language, commands and status bar are German', { timeout: 300_000 }, async () => {
  // No trust dialog: on a loaded machine it can come up after openWorkbench stopped looking for it,
  // and Bot Screen runs nothing in Restricted Mode. Trust is not what this test is about.
  // The indicator is asked for, but waited for in German below.
  await withWindow({ 'security.workspace.trust.enabled': false, 'botScreen.statusBar.visible': 'always' }, async (server, page) => {
    assert.equal(await page.evaluate(() => globalThis._VSCODE_NLS_LANGUAGE), 'de', 'the workbench runs in German');

    // bundle.l10n.de.json: "Screen: {0}" with "{0} sandbox" for the default backend, docker.
    const item = page.locator('.statusbar-item', { hasText: indicatorText('docker', 'de') }).first();
    await item.waitFor({ timeout: 90_000 });
    assert.equal(await indicator(page).count(), 0, 'no English status text');

    // package.nls.de.json: the palette lists the German titles (category "Bot Screen" stays). A row
    // of a translated command carries the English title as a second label, for searching.
    await focusWorkbench(page);
    await page.keyboard.press('F1');
    const widget = page.locator('.quick-input-widget');
    const rowLabels = async () => {
      const rows = await widget.locator('.quick-input-list .monaco-list-row').all();
      return Promise.all(rows.map(async (r) => (await r.locator('.label-name').allTextContents()).map((l) => l.trim())));
    };
    for (const id of ['start', 'showLogs', 'takeControl']) {
      const german = commandTitle(id, 'de');
      await widget.locator('input.input').fill(`>${german}`);
      const row = await waitFor(async () => (await rowLabels()).find((l) => l[0] === german),
        15_000, 200, `the German title "${german}" in the palette`);
      assert.deepEqual(row, [german, commandTitle(id)]);
    }
    await screenshot(page, 'l10n-de-palette');
    await page.keyboard.press('Escape');
  }, {
    indicator: false,
    beforeOpen: async (server) => installLanguagePack(server, await buildLanguagePack(server.dir)),
    failureShot: 'l10n-de-failure',
  });
});
