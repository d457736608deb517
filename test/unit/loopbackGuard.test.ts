// The loopback owner check against this machine's real kernel tables, and the connection cap.
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { LoopbackGuard, loopbackPeerUid, type Refusal } from '../../src/core/loopbackGuard';

function listen(onSocket: (socket: Socket) => void): Promise<Server> {
  const server = createServer(onSocket);
  return new Promise((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, () => resolve(server)));
}

function portOf(server: Server): number {
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

function dial(port: number, host = '127.0.0.1'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port }, () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('loopback peer uid', { skip: process.platform !== 'linux' && 'needs /proc/net/tcp' }, () => {
  let server: Server;
  const accepted: Socket[] = [];
  const next = () => new Promise<Socket>((resolve) => {
    const poll = () => (accepted.length > 0 ? resolve(accepted.shift()!) : setTimeout(poll, 5));
    poll();
  });

  before(async () => {
    server = await listen((socket) => {
      socket.on('error', () => undefined);
      accepted.push(socket);
    });
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('an IPv4 client of this process is this uid', async () => {
    const client = await dial(portOf(server));
    const socket = await next();
    assert.equal(await loopbackPeerUid(socket), process.getuid!());
    client.destroy();
    socket.destroy();
  });

  test('an IPv6 socket dialling the IPv4-mapped address is found in /proc/net/tcp6', async () => {
    const client = await dial(portOf(server), '::ffff:127.0.0.1');
    const socket = await next();
    assert.equal(await loopbackPeerUid(socket), process.getuid!());
    client.destroy();
    socket.destroy();
  });

  test('a peer that is gone is not proven: undefined', async () => {
    const client = await dial(portOf(server));
    const socket = await next();
    client.resetAndDestroy(); // no FIN_WAIT or TIME_WAIT line left behind
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(await loopbackPeerUid(socket), undefined);
    socket.destroy();
  });
});

describe('loopback guard cap', { skip: process.platform !== 'linux' && 'needs /proc/net/tcp' }, () => {
  test('at most N admitted at once; refused sockets are reset; a freed slot admits the next', async () => {
    const refusals: Refusal[] = [];
    const guard = new LoopbackGuard({ maxConnections: 2, onRefused: (reason) => refusals.push(reason) });
    const frees: (() => void)[] = [];
    const verdicts: Promise<boolean>[] = [];
    const server = await listen((socket) => {
      socket.on('error', () => undefined);
      verdicts.push(guard.admit(socket).then((free) => (free ? (frees.push(free), true) : false)));
    });
    const clients = await Promise.all(Array.from({ length: 5 }, () => dial(portOf(server))));
    clients.forEach((c) => c.on('error', () => undefined));
    while (verdicts.length < 5) {
      await new Promise((r) => setTimeout(r, 5));
    }
    const admitted = (await Promise.all(verdicts)).filter(Boolean).length;
    assert.equal(admitted, 2);
    assert.deepEqual(refusals, ['busy', 'busy', 'busy']);
    assert.equal(guard.count, 2);
    frees[0]();
    frees[0](); // twice frees once
    assert.equal(guard.count, 1);
    const late = await dial(portOf(server));
    while (verdicts.length < 6) {
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.equal(await verdicts[5], true);
    assert.equal(guard.count, 2);
    [...clients, late].forEach((c) => c.destroy());
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
