/**
 * The container images the labs of a mode pull, from the labs' own `setup.images`, so the
 * cluster manager preloads exactly what the labs use and no second list has to be kept.
 */
import type { Mode } from '../catalogue/modes.ts';
import { loadLabs } from './registry.ts';

export function labImages(mode: Mode): string[] {
  return [
    ...new Set(
      loadLabs()
        .filter((lab) => lab.modes.includes(mode))
        .flatMap((lab) => lab.setup.images),
    ),
  ].sort();
}
