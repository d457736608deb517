// The translations stay true to the source: scripts/l10n-check.mjs passes on this checkout, and
// on a small fixture it fails naming each kind of defect it exists to catch (so a pass means
// something), and --missing / --prune / --fill do what the integrator relies on after a merge.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

// Bundled to out/test/unit/, so the checkout is three levels up.
const root = path.resolve(__dirname, '../../..');
const script = path.join(root, 'scripts/l10n-check.mjs');
const languages = ['de', 'fr', 'ja', 'zh-cn'];

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [script, ...args], { encoding: 'utf8', timeout: 300_000 });
  return { status: r.status, out: r.stdout + r.stderr };
}

function write(dir: string, file: string, value: unknown) {
  fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  fs.writeFileSync(path.join(dir, file), typeof value === 'string' ? value : JSON.stringify(value, null, 2));
}

test('the bundles of this checkout match ./src, and every language has every key intact', () => {
  const r = run();
  assert.equal(r.status, 0, r.out);
});

test('the check names a stale export, missing, extra and damaged translations, and unknown %keys%; --missing, --prune and --fill repair', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'botscreen-l10n-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  write(dir, 'src/a.ts', `import * as vscode from 'vscode';
vscode.l10n.t('Hello {0}', 'x');
vscode.l10n.t('Set "botScreen.placement" first.');
vscode.l10n.t('Brand new string');
`);
  write(dir, 'package.json', { l10n: './l10n', contributes: { commands: [{ title: '%cmd.a%' }, { title: '%cmd.gone%' }] } });
  write(dir, 'package.nls.json', { 'cmd.a': 'Use `botScreen.autoStart` {0}' });
  // The translations were made when cmd.a still said something else.
  write(dir, 'l10n/source/package.nls.json', { 'cmd.a': 'Set `botScreen.autoStart` {0}' });
  write(dir, 'l10n/bundle.l10n.json', { 'Hello {0}': 'Hello {0}', 'Set "botScreen.placement" first.': 'Set "botScreen.placement" first.' });
  for (const lang of languages) {
    write(dir, `l10n/bundle.l10n.${lang}.json`, {
      'Hello {0}': 'Hallo',
      'Set "botScreen.placement" first.': 'Zuerst "botScreen.Platzierung" setzen.',
      'Old string': 'Alt',
    });
    write(dir, `package.nls.${lang}.json`, { 'cmd.a': '`botScreen.autoStart` verwenden {0}' });
  }

  const r = run('--root', dir);
  assert.equal(r.status, 1, r.out);
  assert.match(r.out, /not a fresh export[\s\S]*new in src: "Brand new string"/);
  assert.match(r.out, /package\.json uses %cmd\.gone%, which package\.nls\.json lacks/);
  for (const lang of languages) {
    const name = `l10n/bundle.l10n.${lang}.json`;
    assert.ok(r.out.includes(`${name} lacks 1 key(s):\n  "Brand new string"`), r.out);
    assert.ok(r.out.includes(`${name} has 1 key(s) the English file does not (drop them with --prune):\n  "Old string"`), r.out);
    assert.ok(r.out.includes(`${name} "Hello {0}": placeholders ["{0}"] became []`), r.out);
    assert.ok(r.out.includes(`${name} "Set \\"botScreen.placement\\" first.": setting ids`), r.out);
  }
  for (const lang of languages) {
    assert.ok(r.out.includes(`package.nls.${lang}.json has 1 translation(s) of an older English text`), r.out);
  }
  assert.doesNotMatch(r.out, /package\.nls\.de\.json "cmd\.a":/, 'its placeholders and code spans are intact');

  const missing = JSON.parse(run('--root', dir, '--missing').out);
  assert.deepEqual(missing.ja, {
    'l10n/bundle.l10n.ja.json': { 'Brand new string': 'Brand new string' },
    'package.nls.ja.json': { 'cmd.a': 'Use `botScreen.autoStart` {0}' },
  });

  run('--root', dir, '--prune');
  const pruned = JSON.parse(fs.readFileSync(path.join(dir, 'l10n/bundle.l10n.fr.json'), 'utf8'));
  assert.deepEqual(Object.keys(pruned).sort(), ['Hello {0}', 'Set "botScreen.placement" first.']);

  // --fill takes the --missing JSON with the English replaced: afterwards no language lacks a key.
  const fillFile = path.join(dir, 'fill.json');
  write(dir, 'fill.json', Object.fromEntries(languages.map((lang) => [lang, {
    [`l10n/bundle.l10n.${lang}.json`]: { 'Brand new string': `Neu (${lang})` },
    [`package.nls.${lang}.json`]: { 'cmd.a': `\`botScreen.autoStart\` {0} (${lang})` },
  }])));
  const filled = run('--root', dir, '--fill', fillFile);
  assert.doesNotMatch(filled.out, /json lacks \d|older English/, filled.out);
  assert.deepEqual(JSON.parse(fs.readFileSync(path.join(dir, 'l10n/source/package.nls.json'), 'utf8')),
    { 'cmd.a': 'Use `botScreen.autoStart` {0}' }, 'the snapshot now holds the English that was translated');
  const ja = JSON.parse(fs.readFileSync(path.join(dir, 'l10n/bundle.l10n.ja.json'), 'utf8'));
  assert.deepEqual(Object.keys(ja), ['Hello {0}', 'Set "botScreen.placement" first.', 'Brand new string'], 'English order');
  assert.equal(ja['Brand new string'], 'Neu (ja)');
});
