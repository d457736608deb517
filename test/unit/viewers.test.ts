import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { ViewerRegistry } from '../../src/core/viewers';

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'botscreen-viewers-'));
}

test('each registered viewer counts until it is disposed; records are private and carry no viewer id', () => {
  const dir = tempDir();
  const registry = new ViewerRegistry(dir, 'wk1');
  assert.equal(registry.count(), 0, 'no directory yet: nobody watches');
  const a = registry.register('viewer-a-secret', 'view');
  const b = registry.register('viewer-b-secret', 'panel');
  const c = registry.register('external-x-1', 'external');
  assert.equal(registry.count(), 3);
  assert.equal(fs.statSync(registry.dir).mode & 0o777, 0o700);
  for (const name of fs.readdirSync(registry.dir)) {
    const file = path.join(registry.dir, name);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.ok(!fs.readFileSync(file, 'utf8').includes('secret') && !name.includes('secret'), 'the viewer id (a capability) is not on disk');
  }
  b.dispose();
  assert.equal(registry.count(), 2);
  a.dispose();
  c.dispose();
  a.dispose();
  assert.equal(registry.count(), 0);
  assert.deepEqual(fs.readdirSync(registry.dir), []);
});

test('the records of a process that died without unregistering are dropped; another host\'s are counted', async () => {
  const dir = tempDir();
  const registry = new ViewerRegistry(dir, 'wk2');
  registry.register('mine', 'view');
  // A real other process holds a record, then dies by SIGKILL (no chance to remove it).
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  const pid = child.pid ?? 0;
  const record = (host: string) => JSON.stringify({ pid, host, kind: 'panel', since: new Date().toISOString() });
  fs.writeFileSync(path.join(registry.dir, `${pid}-0123456789ab.json`), record(os.hostname()), { mode: 0o600 });
  fs.writeFileSync(path.join(registry.dir, `${pid}-ba9876543210.json`), record('another-host.example'), { mode: 0o600 });
  assert.equal(registry.count(), 3, 'a live process\'s viewer counts');
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  assert.equal(registry.count(), 2, 'the dead process\'s viewer no longer counts');
  assert.ok(!fs.existsSync(path.join(registry.dir, `${pid}-0123456789ab.json`)), 'its stale record was removed');
  assert.ok(fs.existsSync(path.join(registry.dir, `${pid}-ba9876543210.json`)), 'a record of another host is not judged from here');
});

test('the watch reports a record another window\'s registry writes, without polling', async () => {
  const dir = tempDir();
  const registry = new ViewerRegistry(dir, 'wk3');
  const other = new ViewerRegistry(dir, 'wk3');
  let calls = 0;
  const changed = new Promise<void>((resolve) => {
    const watch = registry.watch(() => {
      calls++;
      watch.dispose();
      resolve();
    });
  });
  other.register('in-another-window', 'view');
  await Promise.race([changed, new Promise((_, reject) => setTimeout(() => reject(new Error('no change event within 2 s')), 2000))]);
  assert.equal(calls, 1);
  assert.equal(registry.count(), 1);
});
