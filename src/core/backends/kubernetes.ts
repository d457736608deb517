/**
 * The Kubernetes backend: the agent's pod, reached with kubectl; its settings and record, the
 * pod reference checks and the CLI's argv builders and parsers.
 */
import type { Command } from '../command';
import { commandFailed, failureDetail } from '../failure';
import type { Logger } from '../logger';
import { backendSetting, ScreenError, type Problem } from '../problem';
import { PROBE_TIMEOUT_MS, runParsed, type ParsedCommand, type RunResult } from '../runner';
import type { Sandbox } from '../sandbox';
import { isLabel } from '../validate';
import { parses, settingText, type BackendRecord, type Liveness, type SandboxBackend, type SandboxIdentity } from './backend';

export interface KubernetesSettings {
  /** The kubectl program. */
  readonly path: string;
  /** kubeconfig context; empty means the current context. */
  readonly context: string;
  /** Empty means the context's namespace. */
  readonly namespace: string;
  /** The agent's pod. The extension never creates pods. */
  readonly pod: string;
  /** Empty means the pod's default container. */
  readonly container: string;
}

export const KUBERNETES: BackendRecord<KubernetesSettings> = {
  userOnlySettings: ['sandbox.kubernetes.path'],
  fromImage: false,
  readSettings: (source) => ({
    path: settingText(source.user('sandbox.kubernetes.path')) || 'kubectl',
    context: settingText(source.get('sandbox.kubernetes.context')),
    namespace: settingText(source.get('sandbox.kubernetes.namespace')),
    pod: settingText(source.get('sandbox.kubernetes.pod')),
    container: settingText(source.get('sandbox.kubernetes.container')),
  }),
  isIdentity: ({ id, name }) => parses(() => parsePodIdentityId(id)) && isLabel(name),
  create: (settings, { log }) => new KubernetesBackend(settings, log),
};

/** Where a screen's commands go, validated. */
export interface PodRef {
  readonly context: string;
  readonly namespace: string;
  readonly pod: string;
  readonly container: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Pod names are DNS subdomains; namespaces and containers DNS labels; contexts free text without dashes up front. */
export function kubeNameProblem(ref: PodRef): Problem | undefined {
  if (ref.pod === '') {
    return { code: 'podNotSet' };
  }
  if (ref.pod.length > 253 || !DNS_SUBDOMAIN.test(ref.pod)) {
    return { code: 'badKubeName', kind: 'pod', value: ref.pod };
  }
  if (ref.namespace !== '' && !DNS_LABEL.test(ref.namespace)) {
    return { code: 'badKubeName', kind: 'namespace', value: ref.namespace };
  }
  if (ref.container !== '' && !DNS_LABEL.test(ref.container)) {
    return { code: 'badKubeName', kind: 'container', value: ref.container };
  }
  // eslint-disable-next-line no-control-regex
  if (ref.context !== '' && (ref.context.startsWith('-') || ref.context.length > 253 || /[\s\x00-\x1f\x7f]/.test(ref.context))) {
    return { code: 'badKubeName', kind: 'context', value: ref.context };
  }
  return undefined;
}

export function podRef(settings: Pick<KubernetesSettings, 'context' | 'namespace' | 'pod' | 'container'>): PodRef {
  const ref = {
    context: String(settings.context ?? '').trim(),
    namespace: String(settings.namespace ?? '').trim(),
    pod: String(settings.pod ?? '').trim(),
    container: String(settings.container ?? '').trim(),
  };
  const problem = kubeNameProblem(ref);
  if (problem) {
    throw new ScreenError(problem);
  }
  return ref;
}

/** What a marker records: `k8s:` and the four parts, each URI-encoded (contexts may hold `/`). */
export function podIdentityId(ref: PodRef): string {
  return `k8s:${[ref.context, ref.namespace, ref.pod, ref.container].map(encodeURIComponent).join('/')}`;
}

export function parsePodIdentityId(id: string): PodRef {
  const parts = id.startsWith('k8s:') ? id.slice(4).split('/') : [];
  if (parts.length !== 4) {
    throw new ScreenError({ code: 'badKubeName', kind: 'pod', value: id });
  }
  let decoded: string[];
  try {
    decoded = parts.map(decodeURIComponent);
  } catch {
    throw new ScreenError({ code: 'badKubeName', kind: 'pod', value: id });
  }
  const [context, namespace, pod, container] = decoded;
  return podRef({ context, namespace, pod, container });
}

export type PodPhase = { readonly phase: string } | { readonly notFound: true } | { readonly unknown: RunResult };

/** Argv builders and output parsers for kubectl. */
export class KubectlCli {
  constructor(readonly cli: string) {}

  private scope(ref: PodRef): string[] {
    return [...(ref.context ? ['--context', ref.context] : []), ...(ref.namespace ? ['-n', ref.namespace] : [])];
  }

  /** `-i` keeps stdin open for streams; never `-t` (a tty corrupts bytes). */
  exec(ref: PodRef, argv: readonly string[], interactive: boolean): Command {
    return {
      command: this.cli,
      args: ['exec', ...(interactive ? ['-i'] : []), ...this.scope(ref), ref.pod, ...(ref.container ? ['-c', ref.container] : []), '--', ...argv],
    };
  }

  /** The pod's phase, or that it does not exist, or the failed call when neither can be told. */
  phase(ref: PodRef): ParsedCommand<PodPhase> {
    return { command: this.cli, args: ['get', 'pod', ...this.scope(ref), ref.pod, '-o', 'jsonpath={.status.phase}'], parse: parsePhase };
  }
}

function parsePhase(result: RunResult): PodPhase {
  if (result.exitCode === 0 && result.stdout.trim() !== '') {
    return { phase: result.stdout.trim() };
  }
  if (result.exitCode !== undefined && /\(NotFound\)|pods? "[^"]*" not found/.test(result.stderr)) {
    return { notFound: true };
  }
  return { unknown: result };
}

/**
 * A pod the user names (the agent's). Bot Screen never creates, restarts or deletes pods:
 * prepare and find only check that the pod runs.
 */
export class KubernetesBackend implements SandboxBackend {
  private readonly cli: KubectlCli;

  constructor(
    private readonly config: KubernetesSettings,
    private readonly log: Logger,
  ) {
    this.cli = new KubectlCli(config.path || 'kubectl');
  }

  async prepare(): Promise<Sandbox> {
    const ref = podRef(this.config);
    const { result, value: phase } = await runParsed(this.cli.phase(ref), { timeoutMs: PROBE_TIMEOUT_MS });
    if (result.spawnError) {
      throw new ScreenError({ code: 'cliMissing', cli: this.cli.cli, setting: backendSetting('kubernetes', 'path') });
    }
    if ('notFound' in phase) {
      throw new ScreenError({ code: 'podNotFound', pod: ref.pod, namespace: ref.namespace });
    }
    if ('unknown' in phase) {
      throw new ScreenError(commandFailed(`${this.cli.cli} get pod`, result));
    }
    if (phase.phase !== 'Running') {
      throw new ScreenError({ code: 'podNotRunning', pod: ref.pod, phase: phase.phase });
    }
    return this.sandbox(ref);
  }

  find(): Promise<Sandbox | undefined> {
    return this.prepare();
  }

  async fromIdentity(identity: SandboxIdentity): Promise<Sandbox> {
    return this.sandbox(parsePodIdentityId(identity.id));
  }

  /** Running is alive; not found, Succeeded or Failed is gone; anything else (Pending, errors) unknown. */
  async liveness(sandbox: Sandbox): Promise<Liveness> {
    const { result, value: phase } = await runParsed(this.cli.phase(parsePodIdentityId(sandbox.id)), { timeoutMs: 5_000 });
    if ('notFound' in phase) {
      return 'gone';
    }
    if ('phase' in phase) {
      return phase.phase === 'Running' ? 'alive' : phase.phase === 'Succeeded' || phase.phase === 'Failed' ? 'gone' : 'unknown';
    }
    this.log.warn(`could not tell whether the pod ${sandbox.name} is alive: ${failureDetail(result, { stderrOnly: true })}`);
    return 'unknown';
  }

  private sandbox(ref: PodRef): Sandbox {
    return {
      backend: 'kubernetes',
      id: podIdentityId(ref),
      name: `${ref.namespace ? `${ref.namespace}/` : ''}${ref.pod}${ref.container ? `:${ref.container}` : ''}`,
      onHost: false,
      exec: (argv, options) => this.cli.exec(ref, argv, options.interactive),
    };
  }
}
