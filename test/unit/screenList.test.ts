// The Screens overview's list: every window's marker (and nothing else in the directory), each
// with its lease holder, its viewer count and its workspace's name; reading changes no lease. The
// recordings of screens that no longer run: listed without the running ones, read again only when
// their files changed.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { LeaseStore } from '../../src/core/lease';
import { MarkerStore, type Marker } from '../../src/core/marker';
import { listScreens, screenRuns, StoppedRecordings, WorkspaceRecords } from '../../src/core/screenList';
import { ViewerRegistry } from '../../src/core/viewers';

const ID = 'a'.repeat(64);

function marker(workspaceKey: string, startedAt: string, backend: 'docker' | 'ssh' = 'docker'): Marker {
  return {
    version: 1,
    workspaceKey,
    placement: { where: 'sandbox', backend },
    sandbox: backend === 'docker' ? { backend, id: ID, name: `botscreen-${workspaceKey}` } : { backend, id: 'ssh://agent@host', name: 'agent@host' },
    display: ':42',
    runtimeDir: '/tmp/botscreen-1000/k',
    socket: '/tmp/botscreen-1000/k/rfb.sock',
    pid: 4242,
    geometry: '1280x800',
    startedAt,
  };
}

test('lists every usable marker, oldest first, with its holder, viewers and workspace name; leases are only read', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'botscreen-screens-'));
  const markersDir = path.join(root, 'screens');
  const leasesDir = path.join(root, 'leases');
  const markers = new MarkerStore(markersDir);
  const workspaces = new WorkspaceRecords(path.join(root, 'workspaces'));
  const sources = { markers, leasesDir, workspaces };
  assert.deepEqual(listScreens(sources), [], 'no directory yet: no screen');

  markers.write(marker('0123456789ab', '2026-01-01T10:00:00.000Z'));
  markers.write(marker('ba9876543210', '2026-01-01T09:00:00.000Z', 'ssh'));
  fs.writeFileSync(path.join(markersDir, 'cccccccccccc.json'), '{"version": 1, "garbage": true}'); // not a usable marker
  fs.writeFileSync(path.join(markersDir, 'notes.txt'), 'not a marker');
  fs.writeFileSync(path.join(markersDir, '0123456789ab.json.77.tmp'), '{}'); // a write under way
  workspaces.write('0123456789ab', { name: 'project-a', uri: 'file:///home/u/project-a' });
  fs.mkdirSync(path.join(root, 'workspaces'), { recursive: true });
  fs.writeFileSync(path.join(root, 'workspaces', 'ba9876543210.json'), '{"name": 5}');

  const lease = new LeaseStore(leasesDir, '0123456789ab');
  lease.acquire('viewer-1', 'a person took control');
  const viewers = new ViewerRegistry(leasesDir, '0123456789ab');
  const records = [viewers.register('viewer-1', 'view'), viewers.register('viewer-2', 'panel')];
  const before = fs.statSync(lease.path);
  const bytes = fs.readFileSync(lease.path);

  const screens = listScreens(sources);
  assert.deepEqual(
    screens.map((s) => [s.key, s.marker.placement.backend, s.holder, s.viewers, s.workspace?.name]),
    [
      ['ba9876543210', 'ssh', 'agent', 0, undefined],
      ['0123456789ab', 'docker', 'human', 2, 'project-a'],
    ],
  );
  assert.equal(screens[1].workspace?.uri, 'file:///home/u/project-a');
  const after = fs.statSync(lease.path);
  assert.equal(after.mtimeMs, before.mtimeMs, 'the lease file is not written');
  assert.deepEqual(fs.readFileSync(lease.path), bytes);
  assert.ok(!fs.existsSync(lease.lockPath), 'nor locked');
  assert.ok(!fs.existsSync(path.join(leasesDir, 'lease-ba9876543210.json')), "a screen nobody took control of gets no lease file from being listed");
  for (const record of records) record.dispose();
  assert.equal(fs.statSync(path.join(root, 'workspaces', '0123456789ab.json')).mode & 0o777, 0o600);
});

test('a workspace record that is not one names nothing', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'botscreen-workspaces-'));
  const records = new WorkspaceRecords(dir);
  for (const [key, text] of [
    ['aaaaaaaaaaaa', 'not json'],
    ['bbbbbbbbbbbb', JSON.stringify({ name: 'x', uri: '/no/scheme' })],
    ['cccccccccccc', JSON.stringify({ name: 'x'.repeat(201), uri: 'file:///x' })],
  ]) {
    fs.writeFileSync(path.join(dir, `${key}.json`), text);
    assert.equal(records.read(key), undefined, text);
  }
  assert.equal(records.read('dddddddddddd'), undefined);
  records.write('eeeeeeeeeeee', { name: 'ok', uri: 'vscode-remote://ssh-remote+box/home/u/p' });
  assert.deepEqual(records.read('eeeeeeeeeeee'), { name: 'ok', uri: 'vscode-remote://ssh-remote+box/home/u/p' });
});

test('the recordings of stopped screens: newest first, listed screens left out, files listed again only when they changed', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'botscreen-stopped-recordings-'));
  const index = new StoppedRecordings(root);
  assert.deepEqual(index.list(new Set()), [], 'no recordings directory yet');
  const segment = (screenId: string, startedAt: number, seq: number, bytes: number) => {
    fs.mkdirSync(path.join(root, screenId), { recursive: true });
    fs.writeFileSync(path.join(root, screenId, `seg-${startedAt}-${String(seq).padStart(6, '0')}.bsrec`), Buffer.alloc(bytes));
  };
  segment('aaaaaaaaaaaa', 1_000, 0, 100);
  segment('aaaaaaaaaaaa', 31_000, 1, 50);
  segment('bbbbbbbbbbbb', 5_000, 0, 10);
  segment('cccccccccccc', 9_000, 0, 10); // a running screen's
  fs.mkdirSync(path.join(root, 'dddddddddddd')); // nothing kept of it
  fs.writeFileSync(path.join(root, 'not a screen id'), '');
  const old = new Date(Date.now() - 60_000);
  fs.utimesSync(path.join(root, 'aaaaaaaaaaaa', 'seg-31000-000001.bsrec'), old, old);

  const first = index.list(new Set(['cccccccccccc']));
  assert.deepEqual(first.map((r) => [r.screenId, r.bytes, r.segments.length, r.startedAt]), [
    ['bbbbbbbbbbbb', 10, 1, 5_000],
    ['aaaaaaaaaaaa', 150, 2, 1_000],
  ]);
  // Nothing changed: the same summaries, not read again.
  const second = index.list(new Set(['cccccccccccc']));
  assert.equal(second[0], first[0]);
  assert.equal(second[1], first[1]);
  // Appended to its newest segment (a last flush after the screen stopped): its size follows.
  fs.appendFileSync(path.join(root, 'bbbbbbbbbbbb', 'seg-5000-000000.bsrec'), Buffer.alloc(5));
  assert.equal(index.list(new Set(['cccccccccccc'])).find((r) => r.screenId === 'bbbbbbbbbbbb')?.bytes, 15);
  // A segment dropped by the ring: it goes.
  fs.rmSync(path.join(root, 'aaaaaaaaaaaa', 'seg-1000-000000.bsrec'));
  assert.deepEqual(index.list(new Set(['cccccccccccc'])).find((r) => r.screenId === 'aaaaaaaaaaaa')?.bytes, 50);
  // The running screen stopped: its recording is listed; a screen that started again is not.
  assert.deepEqual(index.list(new Set(['aaaaaaaaaaaa'])).map((r) => r.screenId).sort(), ['bbbbbbbbbbbb', 'cccccccccccc']);
  // Deleted: gone from the list.
  fs.rmSync(path.join(root, 'bbbbbbbbbbbb'), { recursive: true });
  assert.deepEqual(index.list(new Set()).map((r) => r.screenId).sort(), ['aaaaaaaaaaaa', 'cccccccccccc']);
});

test('a screen runs while its marker is there, and a marker that cannot be read counts as running', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'botscreen-runs-'));
  const markers = new MarkerStore(dir);
  assert.equal(screenRuns(markers, '0123456789ab'), false, 'no marker');
  markers.write(marker('0123456789ab', '2026-01-01T10:00:00.000Z'));
  assert.equal(screenRuns(markers, '0123456789ab'), true);
  fs.writeFileSync(markers.path('ba9876543210'), 'garbled');
  assert.equal(screenRuns(markers, 'ba9876543210'), true, 'fail closed: it may be running');
  markers.remove('0123456789ab');
  assert.equal(screenRuns(markers, '0123456789ab'), false, 'stopped');
});
