// Whether clipboard text may go to the screen now, and if not, why: the host's half of the rule
// the viewer's input gate applies to each ClientCutText (./rfbInputGate.ts: control, the user's
// policy, the size cap), plus what only the text tells. A server without the extended (UTF-8)
// clipboard takes legacy cut text, which is Latin-1: other text is refused with a note
// (src/clipboard.ts words it), never sent mangled.
import type { RfbInputGate } from './rfbInputGate';

/** `send`, or why not: `notAllowed` says nothing (not in control, or not shared that way); the others are told. */
export type ToScreenVerdict = 'send' | 'notAllowed' | 'tooLarge' | 'notLatin1';

export function toScreenVerdict(gate: Pick<RfbInputGate, 'allowsClipboard' | 'extendedClipboard'> | undefined, text: string): ToScreenVerdict {
  if (!gate?.allowsClipboard('toScreen')) {
    return 'notAllowed';
  }
  if (!gate.allowsClipboard('toScreen', Buffer.byteLength(text, 'utf8'))) {
    return 'tooLarge';
  }
  if (!gate.extendedClipboard && !latin1Only(text)) {
    return 'notLatin1';
  }
  return 'send';
}

/** Whether every character of the text is in Latin-1 (ISO 8859-1), what legacy cut text carries. */
function latin1Only(text: string): boolean {
  return /^[\u0000-\u00ff]*$/u.test(text);
}
