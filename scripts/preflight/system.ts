import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, freemem } from 'node:os';
import type { PreflightSystem } from './types.ts';

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** MemAvailable counts reclaimable cache; os.freemem() does not, and would cry wolf on Linux. */
function memAvailableBytes(): number {
  const kb = /^MemAvailable:\s+(\d+)\s*kB/m.exec(readText('/proc/meminfo') ?? '')?.[1];
  return kb ? Number(kb) * 1024 : freemem();
}

export const realSystem: PreflightSystem = {
  platform: process.platform,
  readText,
  exists: existsSync,
  memAvailableBytes,
  cpuCount: availableParallelism,
};
