// Keeps the translations true to the source: l10n/bundle.l10n.json must equal a fresh export of
// the vscode.l10n.t calls in ./src, every language file must hold exactly the keys of its English
// file (package.nls translations must be of its current English, see NLS_SOURCE), each
// translation must keep the {n} placeholders, `code spans`, botScreen.* setting ids and link
// targets of its English text, and every %key% in package.json must exist in package.nls.json.
//
//   node scripts/l10n-check.mjs            check; exit 1 naming every problem
//   node scripts/l10n-check.mjs --missing  print the keys each language lacks, with their English
//                                          text, as JSON (what a translator has to fill)
//   node scripts/l10n-check.mjs --prune    drop keys the English files no longer have from the
//                                          language files (after a merge removed strings), then check
//   node scripts/l10n-check.mjs --fill F   merge translations from F (the --missing JSON with the
//                                          English texts replaced by translations), then check
//   node scripts/l10n-check.mjs --root DIR check the checkout in DIR instead of this one
//
// A test (test/unit/l10n.test.ts) runs the check, so a new string without a re-export
// (`npm run l10n`) or without its translations fails the unit suite.
import { getL10nJson } from '@vscode/l10n-dev';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const LANGUAGES = ['de', 'fr', 'ja', 'zh-cn'];

// --root DIR checks another checkout (the unit test uses it on a small fixture).
const rootArg = process.argv.indexOf('--root');
const root =
  rootArg > 0 ? resolve(process.argv[rootArg + 1]) : resolve(dirname(fileURLToPath(import.meta.url)), '..');

function readJson(file) {
  return JSON.parse(readFileSync(join(root, file), 'utf8'));
}

function tryReadJson(file) {
  try {
    return readJson(file);
  } catch (err) {
    if (err.code === 'ENOENT') return undefined;
    throw new Error(`${file}: ${err.message}`);
  }
}

// The text of a bundle entry: the export writes a string, or { message, comment } when the
// call carries a translator comment.
function text(value) {
  return typeof value === 'string' ? value : value.message;
}

// The same files the l10n-dev CLI reads for `export ./src`.
function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|tsx|js|jsx)$/.test(entry.name) ? [full] : [];
  });
}

export async function freshExport() {
  const files = sourceFiles(join(root, 'src')).map((file) => ({
    extension: extname(file),
    contents: readFileSync(file, 'utf8'),
  }));
  return getL10nJson(files);
}

// What must survive translation unchanged: placeholders, code spans, setting ids, link targets.
function invariants(s) {
  const sorted = (re) => [...s.matchAll(re)].map((m) => m[0]).sort();
  return {
    placeholders: [...new Set(sorted(/\{\d+\}/g))],
    'code spans': sorted(/`[^`]*`/g),
    'setting ids': sorted(/botScreen\.[A-Za-z0-9_.<>]+[A-Za-z0-9_>]/g),
    'link targets': sorted(/\]\([^)]*\)/g),
  };
}

function compareInvariants(english, translated) {
  const a = invariants(english);
  const b = invariants(translated);
  return Object.keys(a)
    .filter((kind) => JSON.stringify(a[kind]) !== JSON.stringify(b[kind]))
    .map((kind) => `${kind} ${JSON.stringify(a[kind])} became ${JSON.stringify(b[kind])}`);
}

// A bundle key is its English text, so an edited string is a new key. A package.nls key stays
// when its English changes: this snapshot of the English the translations were made from turns
// such an edit into stale translations, listed like missing ones.
const NLS_SOURCE = 'l10n/source/package.nls.json';

// The English file and the language files of one kind (the runtime bundle or package.nls).
function families(bundle, nls, staleNls) {
  return [
    { english: bundle, stale: new Set(), file: (lang) => `l10n/bundle.l10n.${lang}.json` },
    { english: nls, stale: staleNls, file: (lang) => `package.nls.${lang}.json` },
  ];
}

function usedNlsKeys(pkg) {
  const keys = new Set();
  JSON.stringify(pkg).replace(/"%([^"%]+)%"/g, (_, key) => keys.add(key));
  return keys;
}

// Language files list their keys in the order of the English file (extras last), so a fill or a
// prune keeps diffs small and the files easy to compare side by side.
function writeLanguageFile(name, english, translated) {
  const order = Object.keys(english);
  const keys = Object.keys(translated).sort((a, b) => {
    const ia = order.indexOf(a);
    const ib = order.indexOf(b);
    return (ia < 0 ? order.length : ia) - (ib < 0 ? order.length : ib);
  });
  writeFileSync(join(root, name), `${JSON.stringify(Object.fromEntries(keys.map((k) => [k, translated[k]])), null, 2)}\n`);
}

export async function check({ prune = false, fill = undefined } = {}) {
  const problems = [];
  const missing = {};
  const bundle = tryReadJson('l10n/bundle.l10n.json');
  const nls = readJson('package.nls.json');
  const pkg = readJson('package.json');

  if (pkg.l10n !== './l10n') problems.push('package.json: "l10n" must be "./l10n".');
  for (const key of usedNlsKeys(pkg)) {
    if (!(key in nls)) problems.push(`package.json uses %${key}%, which package.nls.json lacks.`);
  }

  const fresh = await freshExport();
  if (!bundle) {
    problems.push('l10n/bundle.l10n.json is missing: run `npm run l10n`.');
  } else {
    const added = Object.keys(fresh).filter((k) => !(k in bundle));
    const gone = Object.keys(bundle).filter((k) => !(k in fresh));
    const changed = Object.keys(fresh).filter(
      (k) => k in bundle && JSON.stringify(fresh[k]) !== JSON.stringify(bundle[k]),
    );
    if (added.length || gone.length || changed.length) {
      problems.push(
        'l10n/bundle.l10n.json is not a fresh export of ./src; run `npm run l10n`.' +
          added.map((k) => `\n  new in src: ${JSON.stringify(k)}`).join('') +
          gone.map((k) => `\n  no longer in src: ${JSON.stringify(k)}`).join('') +
          changed.map((k) => `\n  changed comment: ${JSON.stringify(k)}`).join(''),
      );
    }
  }
  const nlsSource = tryReadJson(NLS_SOURCE) ?? {};
  // A package.nls key filled in every language is translated from today's English; pruning
  // forgets keys package.nls.json no longer has.
  const sourceBefore = JSON.stringify(nlsSource);
  for (const k of Object.keys(nls)) {
    if (LANGUAGES.every((lang) => typeof fill?.[lang]?.[`package.nls.${lang}.json`]?.[k] === 'string')) nlsSource[k] = nls[k];
  }
  if (prune) for (const k of Object.keys(nlsSource)) if (!(k in nls)) delete nlsSource[k];
  if (JSON.stringify(nlsSource) !== sourceBefore) {
    mkdirSync(join(root, dirname(NLS_SOURCE)), { recursive: true });
    writeLanguageFile(NLS_SOURCE, nls, nlsSource);
  }
  const staleNls = new Set(Object.keys(nls).filter((k) => nlsSource[k] !== nls[k]));
  // The language bundles follow the source, even when the committed English bundle is stale.
  for (const { english, stale, file } of families(fresh, nls, staleNls)) {
    for (const lang of LANGUAGES) {
      const name = file(lang);
      const translated = tryReadJson(name) ?? {};
      const filled = Object.entries(fill?.[lang]?.[name] ?? {});
      if (filled.length) {
        for (const [k, v] of filled) {
          if (typeof v !== 'string') throw new Error(`--fill: ${lang} ${name} ${JSON.stringify(k)} is not a string`);
          translated[k] = v;
        }
        writeLanguageFile(name, english, translated);
        console.log(`${name}: filled ${filled.length} key(s).`);
      }
      const lacks = Object.keys(english).filter((k) => typeof translated[k] !== 'string');
      const outdated = Object.keys(english).filter((k) => stale.has(k) && typeof translated[k] === 'string');
      let extra = Object.keys(translated).filter((k) => !(k in english));
      if (prune && extra.length) {
        for (const k of extra) delete translated[k];
        writeLanguageFile(name, english, translated);
        console.log(`${name}: pruned ${extra.length} key(s) no longer in the English file.`);
        extra = [];
      }
      if (lacks.length || outdated.length) {
        missing[lang] = Object.assign(missing[lang] ?? {}, {
          [name]: Object.fromEntries([...lacks, ...outdated].map((k) => [k, text(english[k])])),
        });
      }
      if (outdated.length) {
        problems.push(
          `${name} has ${outdated.length} translation(s) of an older English text (${NLS_SOURCE}):` +
            outdated.map((k) => `\n  ${JSON.stringify(k)} is now ${JSON.stringify(english[k])}`).join(''),
        );
      }
      if (lacks.length) {
        problems.push(
          `${name} lacks ${lacks.length} key(s):` + lacks.map((k) => `\n  ${JSON.stringify(k)}`).join(''),
        );
      }
      if (extra.length) {
        problems.push(
          `${name} has ${extra.length} key(s) the English file does not (drop them with --prune):` +
            extra.map((k) => `\n  ${JSON.stringify(k)}`).join(''),
        );
      }
      for (const k of Object.keys(english)) {
        if (typeof translated[k] !== 'string') continue;
        for (const diff of compareInvariants(text(english[k]), translated[k])) {
          problems.push(`${name} ${JSON.stringify(k)}: ${diff}`);
        }
      }
    }
  }
  return { problems, missing };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const fillArg = args.indexOf('--fill');
  const fill = fillArg >= 0 ? JSON.parse(readFileSync(resolve(args[fillArg + 1]), 'utf8')) : undefined;
  const { problems, missing } = await check({ prune: args.includes('--prune'), fill });
  if (args.includes('--missing')) {
    console.log(JSON.stringify(missing, null, 2));
  } else if (problems.length) {
    console.error(problems.join('\n'));
    console.error(`\n${problems.length} l10n problem(s).`);
    process.exitCode = 1;
  } else {
    console.log(`l10n OK: ${LANGUAGES.join(', ')}.`);
  }
}
