// scripts/run.sh serves a real VS Code (as the user running it, often root) on this machine's
// loopback. Any local user can connect to a loopback port, so without a token they would get
// that server's terminal. This test starts the same serve path (scripts/serve.mjs) and attacks
// it: without the token, with a wrong one, as another Unix user (nobody, through setpriv); and
// checks that the printed address works and that VS Code asks before trusting the folder.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { test } from 'node:test';
import { RUN_USER_SETTINGS, serveForRun } from '../../scripts/serve.mjs';
import { VSIX, removeContainersOf } from './botscreen.mjs';
import { openWorkbench } from './harness.mjs';

function get(url, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers, timeout: 15_000 }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url}`)));
    req.on('error', reject);
  });
}

/**
 * Opens the WebSocket the workbench uses to reach the server (its terminals, its files) and sends
 * the first message of VS Code's remote protocol, `{"type":"auth","auth":TOKEN}`, in one masked
 * binary frame holding one control message (13-byte header: type 2, id, ack, length). Resolves
 * with the server's first control message (`sign` when admitted, `error` when refused), or with
 * `{ status }` when the upgrade itself is refused.
 */
function remoteAuth(serverUrl, auth) {
  const url = `${serverUrl}/?reconnectionToken=${randomUUID()}&reconnection=false&skipWebSocketFrames=false`;
  return new Promise((resolve, reject) => {
    const req = http.get(url, {
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': randomBytes(16).toString('base64') },
      timeout: 15_000,
    });
    req.on('response', (res) => { res.resume(); resolve({ status: res.statusCode }); });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url}`)));
    req.on('error', reject);
    req.on('upgrade', (_res, socket, head) => {
      const json = Buffer.from(JSON.stringify({ type: 'auth', auth, data: randomBytes(8).toString('hex') }));
      const message = Buffer.alloc(13 + json.length);
      message.writeUInt8(2, 0);
      message.writeUInt32BE(json.length, 9);
      json.copy(message, 13);
      const mask = randomBytes(4);
      const masked = Buffer.from(message.map((byte, i) => byte ^ mask[i % 4]));
      socket.write(Buffer.concat([Buffer.from([0x82, 0x80 | 126, message.length >> 8, message.length & 0xff]), mask, masked]));
      let input = head;
      const timer = setTimeout(() => { socket.destroy(); reject(new Error('no answer to the auth message')); }, 15_000);
      const done = (value) => { clearTimeout(timer); socket.destroy(); resolve(value); };
      socket.on('data', (chunk) => {
        input = Buffer.concat([input, chunk]);
        if (input.length < 2) return;
        let length = input[1] & 0x7f;
        let offset = 2;
        if (length === 126) { if (input.length < 4) return; length = input.readUInt16BE(2); offset = 4; }
        if (input.length < offset + length) return;
        const payload = input.subarray(offset, offset + length);
        done(JSON.parse(payload.subarray(13, 13 + payload.readUInt32BE(9)).toString()));
      });
      socket.on('close', () => done({ closed: true }));
      socket.on('error', () => undefined);
    });
  });
}

/** Runs python3 CODE as the local user nobody (uid 65534), with no supplementary groups. */
function asNobody(code, ...args) {
  return spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--', '/usr/bin/python3', '-c', code, ...args], {
    encoding: 'utf8', cwd: '/', timeout: 30_000,
  });
}

test('run.sh: only the holder of the printed token can use the server; workspace trust is on', { timeout: 300_000 }, async () => {
  assert.equal(process.getuid(), 0, 'this test needs root: it acts as a second user through setpriv');
  const { server, url } = await serveForRun({ vsixPath: VSIX });
  try {
    // The printed address carries the token; the token is long and random.
    const printed = new URL(url);
    const token = printed.searchParams.get('tkn');
    assert.equal(token, server.token);
    assert.match(token, /^[A-Za-z0-9_-]{43,}$/);
    assert.equal(printed.hostname, '127.0.0.1');

    // It sits in a file only this user can read, and in no process's argv (/proc is world-readable).
    const tokenFile = path.join(server.dir, 'connection-token');
    assert.equal(fs.readFileSync(tokenFile, 'utf8'), token);
    assert.equal(fs.statSync(tokenFile).mode & 0o777, 0o600);
    assert.equal(fs.statSync(server.dir).mode & 0o077, 0, 'the server directory is private');
    const pids = server.processes();
    assert.ok(pids.length > 0);
    for (const pid of pids) {
      let cmdline = '';
      try { cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'); } catch { continue; }
      assert.ok(!cmdline.includes(token), `the token is not in the argv of pid ${pid}`);
      assert.ok(!cmdline.includes('--without-connection-token') && !cmdline.includes('--disable-workspace-trust'), cmdline);
    }

    // Without the token, or with a wrong one: refused, for pages, resources and the WebSocket.
    const folder = `folder=${encodeURIComponent(server.workspace)}`;
    for (const target of [`/?${folder}`, '/', `/?tkn=${'A'.repeat(token.length)}&${folder}`, '/vscode-remote-resource?path=/etc/passwd']) {
      const res = await get(`${server.url}${target}`);
      assert.equal(res.status, 403, `${target} without the token`);
    }
    // The WebSocket (terminals, files) checks the token in the protocol's first message.
    const refused = await remoteAuth(server.url, 'A'.repeat(token.length));
    assert.equal(refused.type, 'error', JSON.stringify(refused));
    assert.match(refused.reason, /Unauthorized/);
    assert.equal((await remoteAuth(server.url, token)).type, 'sign', 'the same message with the token is admitted');

    // With it: the workbench page is served (the token becomes a cookie for what follows).
    const first = await get(url);
    assert.ok(first.status === 200 || first.status === 302, `status ${first.status}`);
    const cookie = (first.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]).join('; ');
    assert.match(cookie, /vscode-tkn=/);
    const page = await get(`${server.url}/?${folder}`, { cookie });
    assert.equal(page.status, 200);
    assert.match(page.body, /<!DOCTYPE html>/i);

    // Another local user: cannot read the token, and the server refuses it.
    const reader = asNobody('import sys\ntry:\n  open(sys.argv[1]).read(); print("read")\nexcept PermissionError: print("denied")', tokenFile);
    assert.equal(reader.stdout.trim(), 'denied', reader.stderr);
    const visitor = asNobody(
      'import sys, urllib.request, urllib.error\ntry:\n  urllib.request.urlopen(sys.argv[1], timeout=15); print(200)\nexcept urllib.error.HTTPError as e: print(e.code)',
      `${server.url}/?${folder}`,
    );
    assert.equal(visitor.stdout.trim(), '403', visitor.stderr);

    // Workspace trust is on: no user setting turns it off, and the printed address asks first.
    const user = JSON.parse(fs.readFileSync(path.join(server.userDataDir, 'User', 'settings.json'), 'utf8'));
    assert.notEqual(user['security.workspace.trust.enabled'], false);
    for (const [key, value] of Object.entries(RUN_USER_SETTINGS)) assert.equal(user[key], value);
    assert.equal(fs.existsSync(path.join(server.workspace, '.vscode', 'settings.json')), false, 'nothing comes from the workspace');
    const workbench = await openWorkbench(server, { trustTimeoutMs: 60_000, answerTrust: false });
    try {
      assert.equal(workbench.trustAsked, true, 'VS Code asked whether to trust the folder');
    } finally {
      await workbench.close();
    }
  } finally {
    await server.stop();
    removeContainersOf(server.workspace);
  }
});
