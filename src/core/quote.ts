/**
 * POSIX shell quoting. Every word that reaches a shell goes through here: a single-quoted word
 * is taken literally by sh, bash and a remote login shell alike.
 */
export function shellQuote(word: string): string {
  if (word !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) {
    return word;
  }
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

export function shellJoin(words: readonly string[]): string {
  return words.map(shellQuote).join(' ');
}
