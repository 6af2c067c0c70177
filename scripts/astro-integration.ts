import type { AstroIntegration } from 'astro';

/** Placeholder replaced below once the runner server exists. */
export default function dplabRunner(): AstroIntegration {
  return { name: 'dplab-runner', hooks: {} };
}
