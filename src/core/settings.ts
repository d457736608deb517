/**
 * The settings snapshot core code acts on, read by the extension when an action starts
 * (src/settings.ts). Each backend's own settings come from its record (backends/registry.ts).
 */
import type { BackendSettings } from './backends/registry';
import type { BackendName, PlacementSetting } from './placement';

export type { BackendSettings };

export interface ScreenSettings extends BackendSettings {
  readonly placement: PlacementSetting;
  /** undefined when the configured name is not a backend we know. */
  readonly backend: BackendName | undefined;
  readonly backendRaw: string;
  readonly geometry: string;
  /** Stop a screen nobody used for this long; 0 disables. */
  readonly idleStopMinutes: number;
  /** Identifies this VS Code window's workspace: container labels, runtime dir, marker. */
  readonly workspaceKey: string;
}
