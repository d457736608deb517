import type { Readable, Writable } from 'node:stream';

/** Reads exactly `n` bytes from a stream (the RFB client side of a test). */
export function readExactly(stream: Readable, n: number, timeoutMs = 10_000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const timer = setTimeout(() => finish(new Error(`timed out waiting for ${n} bytes (got ${buffered.length})`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length >= n) {
        const rest = buffered.subarray(n);
        finish(undefined, buffered.subarray(0, n));
        if (rest.length > 0) {
          stream.unshift(rest);
        }
      }
    };
    const onEnd = () => finish(new Error(`stream ended after ${buffered.length} of ${n} bytes`));
    function finish(err?: Error, value?: Buffer) {
      clearTimeout(timer);
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.pause();
      if (err) {
        reject(err);
      } else {
        resolve(value!);
      }
    }
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.resume();
  });
}

export interface ServerInit {
  readonly banner: string;
  readonly securityTypes: number[];
  readonly width: number;
  readonly height: number;
  readonly name: string;
}

/**
 * An RFB 3.8 client handshake with security type None, up to ServerInit. `timeoutMs` bounds the
 * wait for the banner (a new relay's exec may start slowly on a loaded machine).
 */
export async function rfbHandshake(input: Readable, output: Writable, timeoutMs = 10_000): Promise<ServerInit> {
  const banner = (await readExactly(input, 12, timeoutMs)).toString('latin1');
  output.write('RFB 003.008\n');
  const count = (await readExactly(input, 1))[0];
  if (count === 0) {
    throw new Error('server refused the connection');
  }
  const securityTypes = [...(await readExactly(input, count))];
  output.write(Buffer.from([1]));
  const result = (await readExactly(input, 4)).readUInt32BE(0);
  if (result !== 0) {
    throw new Error(`security result ${result}`);
  }
  output.write(Buffer.from([1])); // ClientInit: shared
  const init = await readExactly(input, 24);
  const nameLength = init.readUInt32BE(20);
  const name = (await readExactly(input, nameLength)).toString('utf8');
  return { banner, securityTypes, width: init.readUInt16BE(0), height: init.readUInt16BE(2), name };
}
