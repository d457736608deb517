/** Checks of user-supplied values before anything runs with them. */

const IMAGE_REF = /^[A-Za-z0-9][A-Za-z0-9._/:-]*(@sha256:[a-f0-9]{64})?$/;
const CONTAINER_REF = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
// A host name, IPv4/IPv6 address (with a %zone) or ssh_config alias. No shell metacharacters:
// ssh_config's %h/%r expand into ProxyCommand and `Match exec`, which run through a shell.
const HOST = /^[A-Za-z0-9_.:%]([A-Za-z0-9_.:%-]*)$/;

/** A docker image reference; rejects leading dashes, spaces and shell metacharacters. */
export function isValidImage(image: string): boolean {
  return image.length > 0 && image.length <= 255 && IMAGE_REF.test(image) && !image.includes('//');
}

/** A container name or id as docker accepts them. */
export function isValidContainerRef(name: string): boolean {
  return name.length > 0 && name.length <= 128 && CONTAINER_REF.test(name);
}

/** A host to reach: an SSH destination, or the address a forwarded port goes to in a sandbox. */
export function isValidHost(host: string): boolean {
  return host.length > 0 && host.length <= 253 && HOST.test(host);
}

/** A name only shown to the user (a sandbox's, from a marker): printable, bounded. */
export function isLabel(value: string): boolean {
  // eslint-disable-next-line no-control-regex
  return value.length > 0 && value.length <= 512 && !/[\x00-\x1f\x7f]/.test(value);
}

export interface Geometry {
  readonly width: number;
  readonly height: number;
}

/** `WIDTHxHEIGHT`, each between 320 and 8192. */
export function parseGeometry(text: string): Geometry | undefined {
  const match = /^(\d{3,4})x(\d{3,4})$/.exec(text.trim());
  if (!match) {
    return undefined;
  }
  const width = Number(match[1]);
  const height = Number(match[2]);
  const inRange = (n: number) => n >= 320 && n <= 8192;
  return inRange(width) && inRange(height) ? { width, height } : undefined;
}
