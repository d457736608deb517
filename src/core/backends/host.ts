/** The backend for a screen on this machine: nothing to create, always there. */
import type { BackendName } from '../placement';
import { hostSandbox, type Sandbox } from '../sandbox';
import type { Liveness, SandboxBackend } from './backend';

/** This machine (the `local` backend, or the `gateway` opt-in). It is always there. */
export class HostBackend implements SandboxBackend {
  constructor(private readonly backend: BackendName) {}

  prepare(): Promise<Sandbox> {
    return Promise.resolve(hostSandbox(this.backend));
  }

  find(): Promise<Sandbox | undefined> {
    return this.prepare();
  }

  fromIdentity(): Promise<Sandbox> {
    return this.prepare();
  }

  liveness(): Promise<Liveness> {
    return Promise.resolve('alive');
  }
}
