/**
 * What a failed command says, as one detail line for a log, a problem or a message: the one
 * place that turns a RunResult into words (every backend, the agent tools and the commands use it).
 */
import type { Command } from './command';
import { ScreenError, type Problem } from './problem';
import { run, type RunResult } from './runner';

export interface DetailOptions {
  /** Keep only the last this many non-blank lines, joined by spaces (multi-line CLI errors). */
  readonly lines?: number;
  /** Keep at most this many characters, from the end (where CLIs put the reason). */
  readonly maxChars?: number;
  /**
   * Only stderr counts: for programs whose stdout is data (a screenshot's base64, xdotool's
   * output), never words for a person. A timeout then says so before any partial stderr.
   */
  readonly stderrOnly?: boolean;
}

/**
 * The tail of stderr (else stdout); without any output, why there was none: `timed out`, the
 * spawn error, or the exit code.
 */
export function failureDetail(result: RunResult, options: DetailOptions = {}): string {
  if (options.stderrOnly && result.timedOut) {
    return 'timed out';
  }
  const text = (options.stderrOnly ? result.stderr : result.stderr || result.stdout).trim();
  const kept = options.lines === undefined ? text : text.split('\n').filter((line) => line.trim() !== '').slice(-options.lines).join(' ');
  return kept.slice(-(options.maxChars ?? 1000)) || (result.timedOut ? 'timed out' : result.spawnError ?? `exit ${result.exitCode}`);
}

/** A failed command as a problem: what ran, and its detail line. */
export function commandFailed(what: string, result: RunResult): Problem {
  return { code: 'commandFailed', what, detail: failureDetail(result) };
}

/** Runs a command that must succeed; its failure becomes a `commandFailed` problem. */
export async function mustSucceed(what: string, command: Command, timeoutMs = 120_000): Promise<RunResult> {
  const result = await run(command, { timeoutMs });
  if (result.exitCode !== 0) {
    throw new ScreenError(commandFailed(what, result));
  }
  return result;
}
