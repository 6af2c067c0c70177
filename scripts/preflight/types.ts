/** What `dplab doctor` and provisioning's preflight report: one finding per check. */
import type { Mode } from '../catalogue/modes.ts';

type FindingStatus = 'ok' | 'warn' | 'fail';

export interface Finding {
  /** Stable id (`docker-daemon`, `kind-version`, …) for tests and the UI. */
  id: string;
  title: string;
  status: FindingStatus;
  /** What we saw, in a sentence. */
  detail: string;
  /** The exact command or step that fixes it (absent when ok). */
  fix?: string;
}

/** The host facts checks read, behind one seam so tests can play any machine. */
export interface PreflightSystem {
  platform: NodeJS.Platform;
  /** File content, or undefined when it cannot be read. */
  readText(path: string): string | undefined;
  exists(path: string): boolean;
  /** Memory available for new work, in bytes (Linux: MemAvailable). */
  memAvailableBytes(): number;
  /** CPUs this process may use (the capacity check for workshop seats); absent in older fakes. */
  cpuCount?(): number;
}

export interface PreflightOptions {
  /** The modes about to be provisioned (or checked); decides which checks are relevant. */
  modes: readonly Mode[];
  /** How many new clusters the memory check budgets for (default: one per mode). */
  clusters?: number;
  /** Workshop seats about to be made, each with one cluster per mode (`dplab doctor --seats N`). */
  seats?: number;
  system?: PreflightSystem;
  signal?: AbortSignal;
}
