import type { Logger } from '../logger';
import type { ProgressReporter } from '../progress';
import type { BackendName, Placement } from '../placement';
import type { ScreenSettings } from '../screen';
import { ApptainerBackend } from './apptainer';
import type { SandboxBackend } from './backend';
import { DockerBackend } from './docker';
import { HostBackend } from './host';
import { KubernetesBackend } from './kubernetes';
import { SshBackend } from './ssh';

/**
 * The backend that hosts a placement's screen; undefined for a refused placement, and for a
 * backend name this version does not know (a marker written by another version).
 */
export function backendFor(placement: Placement, settings: ScreenSettings, log: Logger, progress?: ProgressReporter): SandboxBackend | undefined {
  if (placement.where === 'host') {
    return new HostBackend(placement.backend);
  }
  return placement.where === 'sandbox' ? sandboxBackend(placement.backend, settings, log, progress) : undefined;
}

function sandboxBackend(backend: BackendName, settings: ScreenSettings, log: Logger, progress?: ProgressReporter): SandboxBackend | undefined {
  switch (backend) {
    case 'docker':
      return new DockerBackend(settings.docker, settings.workspaceKey, log, 'docker', progress);
    case 'podman':
      // Podman's CLI is Docker's: the same container management, its own settings.
      return new DockerBackend(settings.podman, settings.workspaceKey, log, 'podman', progress);
    case 'ssh':
      return new SshBackend(settings.ssh, log);
    case 'apptainer':
      return new ApptainerBackend(settings.apptainer, settings.workspaceKey, log);
    case 'kubernetes':
      return new KubernetesBackend(settings.kubernetes, log);
    default:
      return undefined;
  }
}
