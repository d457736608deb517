/**
 * The decisions a start must not take alone. A workspace may name a sandbox (teams share their
 * settings), but a workspace settings file can also be written by a cloned repository or by the
 * agent itself: so a start that would remove a container because the workspace asks for another
 * image, or run a screen on an SSH host the workspace names and the user never approved, asks the
 * person first. Who asks is the caller's business (a modal for commands); an agent tool has
 * nobody to ask and gets a refusal that tells it to ask the user.
 */
import { ScreenError, type StartQuestion } from './problem';

/** The questions live with the problem that carries them; consent is where they are asked. */
export type { StartQuestion };

/**
 * `yes`: go ahead. `keep`: start, but on the current container (only for replaceContainer).
 * `cancel`: the person said no. `cannotAsk`: nobody can answer (an agent tool).
 */
export type ConsentAnswer = 'yes' | 'keep' | 'cancel' | 'cannotAsk';

/** Hosts the user approved, kept across windows by the extension. */
export interface HostMemory {
  has(host: string): boolean;
  add(host: string): Promise<void> | void;
}

export interface StartConsent {
  ask(question: StartQuestion): Promise<ConsentAnswer>;
  readonly hosts: HostMemory;
}

export const NO_HOSTS: HostMemory = { has: () => false, add: () => undefined };

/** The consent of a caller that cannot ask anyone: every question is refused. */
export function cannotAsk(hosts: HostMemory = NO_HOSTS): StartConsent {
  return { ask: async () => 'cannotAsk', hosts };
}

/** Where a value that decides a start came from. */
export type ImageSource = 'default' | 'user' | 'workspace';

/**
 * What a start does with our existing container, given the image it runs (`current`, undefined
 * when it could not be read) and the configured one: `replace` only for the user's own image,
 * `ask` for an image the workspace asks for, else `reuse` (an unpinned default is the Switch/Keep
 * question, never a replacement).
 */
export function imageDecision(current: string | undefined, image: string, source: ImageSource): 'reuse' | 'replace' | 'ask' {
  if (current === undefined || current === image) {
    return 'reuse';
  }
  return source === 'user' ? 'replace' : source === 'workspace' ? 'ask' : 'reuse';
}

/**
 * Whether a start replaces our container: true when the user's own image differs or the person
 * approved the workspace's image, false to start on the current container. Throws `needsConsent`
 * when the person cancelled or nobody could be asked: then nothing may change.
 */
export async function approveReplacement(
  consent: StartConsent,
  source: ImageSource,
  question: Extract<StartQuestion, { kind: 'replaceContainer' }>,
): Promise<boolean> {
  const decision = imageDecision(question.currentImage, question.image, source);
  if (decision !== 'ask') {
    return decision === 'replace';
  }
  const answer = await consent.ask(question);
  if (answer === 'yes' || answer === 'keep') {
    return answer === 'yes';
  }
  throw new ScreenError({ code: 'needsConsent', question, declined: answer === 'cancel' });
}

/**
 * Returns when the screen may run on `host`: the user configured it, or approved it before (now
 * or in another window). Throws `needsConsent` otherwise; nothing has contacted the host then.
 */
export async function approveHost(consent: StartConsent, host: string, fromWorkspace: boolean): Promise<void> {
  if (!fromWorkspace || consent.hosts.has(host)) {
    return;
  }
  const question: StartQuestion = { kind: 'newHost', host };
  const answer = await consent.ask(question);
  if (answer === 'yes') {
    await consent.hosts.add(host);
    return;
  }
  throw new ScreenError({ code: 'needsConsent', question, declined: answer === 'cancel' });
}
