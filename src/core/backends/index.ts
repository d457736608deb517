import type { Logger } from '../logger';
import type { BackendName, Placement } from '../placement';
import type { ScreenSettings } from '../screen';
import type { SandboxBackend } from './backend';
import { DockerBackend } from './docker';
import { HostBackend } from './host';

/** The backend that hosts a placement's screen; undefined when Bot Screen cannot run it yet. */
export function backendFor(placement: Placement, settings: ScreenSettings, log: Logger): SandboxBackend | undefined {
  if (placement.where === 'host') {
    return new HostBackend(placement.backend);
  }
  return placement.where === 'sandbox' ? sandboxBackend(placement.backend, settings, log) : undefined;
}

function sandboxBackend(backend: BackendName, settings: ScreenSettings, log: Logger): SandboxBackend | undefined {
  switch (backend) {
    case 'docker':
      return new DockerBackend(settings.docker, settings.workspaceKey, log);
    default:
      return undefined;
  }
}
