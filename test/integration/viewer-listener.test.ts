// The external-viewer port against the real screen: loopback only, RFB through it, input gated.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { after, describe, test } from 'node:test';
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

  test('closing the listener ends every connection and its relay', async () => {
    const socket = await open(listener.port);
    await rfbHandshake(socket as unknown as Readable, socket);
    await listener.close();
    await waitFor(() => socket.destroyed || socket.readableEnded, 5_000, 'the connection to close');
    assert.equal(hostProcesses(`Bot Screen relay.*/${config.workspaceKey}/rfb\\.sock`).length, 0);
  });
});
