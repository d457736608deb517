/**
 * POSIX shell quoting. Every word that reaches a shell goes through here: a single-quoted word
 * is taken literally by every POSIX login shell (sh/dash, bash, zsh, ksh/mksh), interactive or
 * not, whatever options its rc files set.
 *
 * Only words made entirely of characters that no such shell treats specially, in any position,
 * stay bare. `=` is not one of them: zsh expands a word starting with `=` (`=ls` is the path of
 * ls), with MAGIC_EQUAL_SUBST it expands after any `=` (`a==ls`), and in command position
 * `NAME=value` is an assignment, not a program. Everything else (`~`, braces, `!`, globs, `#`,
 * `^`, `%`, spaces, newlines, non-ASCII and non-UTF-8 text, the empty word) is quoted. A quote
 * inside the word becomes `'\''`, which never puts two quotes inside one quoted run, so zsh's
 * RC_QUOTES cannot merge them either.
 */
export function shellQuote(word: string): string {
  if (word.includes('\0')) {
    // No shell word, and no argv word, can hold a NUL: it would be cut short, silently.
    throw new TypeError('a shell word cannot contain a NUL character');
  }
  if (word !== '' && /^[A-Za-z0-9_@+:,./-]+$/.test(word)) {
    return word;
  }
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

export function shellJoin(words: readonly string[]): string {
  return words.map(shellQuote).join(' ');
}
