/**
 * The agent tools as VS Code language-model tools (`contributes.languageModelTools`): any chat
 * agent can see and act on the screen through them. One class per tool in this folder, listed
 * once here; its `languageModelTools` entry in package.json gives the model its description and
 * input schema.
 */
import * as vscode from 'vscode';
import { AgentActionRunner } from '../../core/actions/agentActionRunner';
import type { Ctx } from '../../ctx';
import { LiveOverlay } from '../../liveOverlay';
import { invokeTool, type AgentToolClass } from './agentTool';
import { ClickTool } from './clickTool';
import { DragTool } from './dragTool';
import { KeyTool } from './keyTool';
import { MoveTool } from './moveTool';
import { OpenUrlTool } from './openUrlTool';
import { ScreenshotFolder } from './screenshotFolder';
import { ScreenshotTool } from './screenshotTool';
import { ScrollTool } from './scrollTool';
import { TypeTool } from './typeTool';
import { WaitTool } from './waitTool';

export const AGENT_TOOLS: readonly AgentToolClass[] = [
  ScreenshotTool,
  MoveTool,
  ClickTool,
  DragTool,
  ScrollTool,
  TypeTool,
  KeyTool,
  OpenUrlTool,
  WaitTool,
];

export function registerAgentTools(ctx: Ctx): AgentActionRunner {
  const host = {
    ctx,
    runner: new AgentActionRunner(ctx.controller, ctx.control.store, ctx.log),
    shots: new ScreenshotFolder(vscode.Uri.joinPath(ctx.extension.globalStorageUri, 'screenshots').fsPath),
  };
  // Every viewer of the screen in this window draws each action as it begins.
  ctx.register(new LiveOverlay(host.runner, () => ctx.views.viewers()));
  for (const Tool of AGENT_TOOLS) {
    const tool = new Tool();
    ctx.register(
      vscode.lm.registerTool<unknown>(Tool.id, {
        prepareInvocation: (options) => tool.prepareInvocation(options.input),
        invoke: (options, token) => invokeTool(host, Tool.id, tool, options.input, token),
      }),
    );
  }
  return host.runner;
}
