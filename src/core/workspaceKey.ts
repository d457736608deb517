// The workspace key: a short stable name for one workspace (a folder or a .code-workspace file),
// which names its sandbox container, its runtime dir and its lease. No `vscode` here, so the
// tests compute the key with this very function.
import { createHash } from 'node:crypto';

/** The key of the workspace whose URI (as VS Code prints it) is `identity`. */
export function workspaceKeyOf(identity: string): string {
  return createHash('sha256').update(identity).digest('hex').slice(0, 12);
}
