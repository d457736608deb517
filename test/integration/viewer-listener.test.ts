// The external-viewer port against the real screen: loopback only, RFB through it, input gated.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { connect, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { run } from '../../src/core/runner';
import { ScreenController } from '../../src/core/screen';
import { listenForViewers, type ViewerListener } from '../../src/core/viewerListener';
import { rfbHandshake } from '../support/rfb';
import { hostProcesses, removeTestContainers, settings, tempMarkers, testLog, waitFor } from '../support/env';

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('external viewer port', () => {
  const config = settings();
  const controller = new ScreenController(() => config, testLog, tempMarkers());
  let listener: ViewerListener;

  after(async () => {
    await listener?.close();
    await controller.stop().catch(() => undefined);
    controller.dispose();
    removeTestContainers(config.workspaceKey);
  });

  test('a native viewer gets the RFB handshake on 127.0.0.1, each connection its own relay', async () => {
    await controller.start();
    listener = await listenForViewers(() => controller.openRelay(), () => false);
    const sockets = await Promise.all([open(listener.port), open(listener.port)]);
    for (const socket of sockets) {
      const init = await rfbHandshake(socket as unknown as Readable, socket);
      assert.deepEqual([init.width, init.height], [1280, 800]);
    }
    assert.equal(listener.connections(), 2);
    const relays = () => hostProcesses(`Bot Screen relay.*/${config.workspaceKey}/rfb\\.sock`).length;
    assert.equal(relays(), 2);
    sockets.forEach((s) => s.destroy());
    await waitFor(() => listener.connections() === 0 && relays() === 0, 5_000, 'relays to end with their connections');
  });

  test('the listener binds loopback only', () => {
    const port = listener.port.toString(16).toUpperCase().padStart(4, '0');
    const listening = readFileSync('/proc/net/tcp', 'utf8')
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields[1]?.endsWith(`:${port}`) && fields[3] === '0A')
      .map((fields) => fields[1]);
    assert.deepEqual(listening, [`0100007F:${port}`], 'listening on 127.0.0.1 only');
  });

  test('a VNC client we did not write (Debian\'s vncsnapshot) gets the desktop\'s framebuffer', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'botscreen-snap-')), 'screen.jpg');
    // vncsnapshot 1.2a (2004) cannot decode TigerVNC's Tight rectangles and waits forever on
    // them; Raw is the encoding every VNC client and server share.
    const result = await run(
      { command: 'vncsnapshot', args: ['-quiet', '-allowblank', '-encodings', 'raw', `127.0.0.1::${listener.port}`, out] },
      { timeoutMs: 60_000 },
    );
    assert.equal(result.exitCode, 0, result.stderr);
    const jpeg = readFileSync(out);
    assert.deepEqual([jpeg[0], jpeg[1]], [0xff, 0xd8], 'a JPEG');
    assert.deepEqual(jpegSize(jpeg), [1280, 800]);
    rmSync(dirname(out), { recursive: true, force: true });
  });

  test('closing the listener ends every connection and its relay', async () => {
    const socket = await open(listener.port);
    await rfbHandshake(socket as unknown as Readable, socket);
    await listener.close();
    await waitFor(() => socket.destroyed || socket.readableEnded, 5_000, 'the connection to close');
    assert.equal(hostProcesses(`Bot Screen relay.*/${config.workspaceKey}/rfb\\.sock`).length, 0);
  });
});

/** Width and height from a JPEG's start-of-frame marker. */
function jpegSize(jpeg: Buffer): [number, number] | undefined {
  let offset = 2;
  while (offset + 9 < jpeg.length) {
    const marker = jpeg[offset + 1];
    const length = jpeg.readUInt16BE(offset + 2);
    if (marker >= 0xc0 && marker <= 0xc3) {
      return [jpeg.readUInt16BE(offset + 7), jpeg.readUInt16BE(offset + 5)];
    }
    offset += 2 + length;
  }
  return undefined;
}
