import type { Logger } from '../logger';
import type { BackendName, Placement } from '../placement';
import type { ScreenSettings } from '../screen';
import { ApptainerBackend, type ApptainerSettings } from './apptainer';
import type { SandboxBackend } from './backend';
import { DockerBackend } from './docker';
import { HostBackend } from './host';
import { KubernetesBackend, type KubernetesSettings } from './kubernetes';
import { SshBackend, type SshSettings } from './ssh';

/** Podman runs our container exactly like Docker does, through its compatible CLI. */
export interface PodmanSettings {
  /** The podman program. */
  readonly path: string;
  readonly image: string;
  /** An existing container to attach to (the agent's own); empty means "ours". */
  readonly container: string;
  readonly pidsLimit: number;
  /** The user wrote the image setting in some scope (even to the default value). */
  readonly imagePinned: boolean;
}

/** What a backend uses while its settings object is absent from `ScreenSettings`. */
export const BACKEND_DEFAULTS = {
  ssh: { host: '', user: '', port: undefined, identityFile: '', path: 'ssh' } satisfies SshSettings,
  apptainer: { path: 'apptainer', image: '', instance: '' } satisfies ApptainerSettings,
  kubernetes: { path: 'kubectl', context: '', namespace: '', pod: '', container: '' } satisfies KubernetesSettings,
} as const;

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
    case 'podman': {
      const podman = settings.podman ?? { ...settings.docker, path: 'podman' };
      return new DockerBackend(
        { cli: podman.path || 'podman', image: podman.image, container: podman.container, pidsLimit: podman.pidsLimit, imagePinned: podman.imagePinned },
        settings.workspaceKey,
        log,
        'podman',
      );
    }
    case 'ssh':
      return new SshBackend(settings.ssh ?? BACKEND_DEFAULTS.ssh, log);
    case 'apptainer':
      return new ApptainerBackend(settings.apptainer ?? BACKEND_DEFAULTS.apptainer, settings.workspaceKey, log);
    case 'kubernetes':
      return new KubernetesBackend(settings.kubernetes ?? BACKEND_DEFAULTS.kubernetes, log);
    default:
      return undefined;
  }
}
