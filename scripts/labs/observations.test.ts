// A replayed file of another shape than its check reads fails loudly, naming the file and the field.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkedObservations, findObservationFile, readObservationFile } from './observations.ts';
import { requireLab } from './registry.ts';

const lab = requireLab('first-service');
const step = lab.steps.find((s) => s.id === 'expose-web')!;

describe('observation schemas', () => {
  it('accept the recorded file and refuse the same file with a port as text', () => {
    const path = findObservationFile(lab.id, step.id, 'solved', 'iptables')!;
    expect(readObservationFile(path, 'expose-web.solved.json', step.check.observations).observations).toBeTruthy();
    const file = JSON.parse(readFileSync(path, 'utf8'));
    file.observations.service.services.items[0].spec.ports[0].port = '80';
    const bad = join(mkdtempSync(join(tmpdir(), 'dplab-obs-')), 'expose-web.solved.json');
    writeFileSync(bad, JSON.stringify(file));
    expect(() => readObservationFile(bad, 'labs/first-service/observations/expose-web.solved.json', step.check.observations)).toThrow(
      'labs/first-service/observations/expose-web.solved.json: observations.service.services.items[0].spec.ports[0].port: Expected number, received string',
    );
  });

  it('refuse what a live gather returned when it has another shape', () => {
    expect(() =>
      checkedObservations(step.check.observations, { service: { services: { items: 'none' } } }, 'The check of first-service/expose-web'),
    ).toThrow(/unexpected shape: The check of first-service\/expose-web: service\.services\.items: Expected array, received string/);
  });
});
