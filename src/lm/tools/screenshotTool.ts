/** `bot-screen_screenshot`: a PNG of the screen, saved for the model and, where VS Code carries images, attached. */
import * as vscode from 'vscode';
import { AgentTool, type DoneResult } from './agentTool';
import type { ScreenshotFolder } from './screenshotFolder';

export class ScreenshotTool extends AgentTool<'screenshot'> {
  static readonly id = 'bot-screen_screenshot';
  readonly kind = 'screenshot';

  invocationMessage(): string {
    return vscode.l10n.t('Taking a screenshot of the Bot Screen');
  }

  doneMessage(): string {
    return vscode.l10n.t('Screenshot taken.');
  }

  override doneResult(result: DoneResult, shots: ScreenshotFolder): vscode.LanguageModelToolResult {
    if (!result.screenshot) {
      return super.doneResult(result, shots);
    }
    const file = shots.save(result.screenshot);
    const parts: unknown[] = [
      new vscode.LanguageModelTextPart(
        vscode.l10n.t(
          'Screenshot of the {0}x{1} screen (coordinates for the other Bot Screen tools are pixels of this image, origin top left), saved as a PNG file: {2}',
          result.screenshot.width,
          result.screenshot.height,
          file,
        ),
      ),
    ];
    const image = imagePart(result.screenshot.png);
    if (image) {
      parts.push(image);
    }
    return new vscode.LanguageModelToolResult(parts as vscode.LanguageModelTextPart[]);
  }
}

/**
 * The screenshot as an image part, where this VS Code carries images in tool results. In 1.99 the
 * host converts only text and prompt-tsx parts (anything else makes the whole call fail), and its
 * LanguageModelDataPart lacks the static `image` of the finished API: that static is the sign.
 */
function imagePart(png: Uint8Array): unknown {
  const DataPart = (vscode as unknown as { LanguageModelDataPart?: { image?: (data: Uint8Array, mime: string) => unknown } }).LanguageModelDataPart;
  return typeof DataPart?.image === 'function' ? DataPart.image(png, 'image/png') : undefined;
}
