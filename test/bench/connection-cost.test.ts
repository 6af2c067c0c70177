/**
 * The connection-cost recorder's report: each recorded point beside its own mode at 0 Services
 * (the floor) and beside nftables at the same size (iptables for nftables itself), as `dplab
 * bench` joins it, and the side-by-side table of mode × size, where a mode not recorded says so.
 */
import { describe, expect, it } from 'vitest';
import { madeUpRecording } from '../fixtures/connection-cost.ts';
import { rows, sideBySide } from './connection-cost.ts';

const FILE = madeUpRecording();

describe('connection-cost report', () => {
  it('a row per recorded point, with its floor (0 Services) as the limit and the other kube-proxy mode at the same size as the peer', () => {
    const r = rows(FILE);
    expect(r.map((x) => [x.measure.split(':')[0], x.ours, x.peer, x.limit])).toEqual([
      ['iptables @ 0 Services', 100, { name: 'nftables @ same size', value: 110 }, undefined],
      ['iptables @ 1,000 Services', 160, { name: 'nftables @ same size', value: 112 }, { name: 'iptables @ 0 Services', value: 100 }],
      ['nftables @ 0 Services', 110, { name: 'iptables @ same size', value: 100 }, undefined],
      ['nftables @ 1,000 Services', 112, { name: 'iptables @ same size', value: 160 }, { name: 'nftables @ 0 Services', value: 110 }],
    ]);
    expect(r[1].measure).toContain('1,002 rules ahead; first rule 100 µs');
  });

  it('prints mode × size side by side, a mode not recorded as such', () => {
    expect(sideBySide(FILE).split('\n')).toEqual([
      '| mode | 0 Services | 1,000 Services |',
      '| --- | --- | --- |',
      '| iptables | 100 µs (p90 150; 40 entries, 3 ahead) | 160 µs (p90 210; 11,040 entries, 1,002 ahead) |',
      '| ipvs | not recorded yet | not recorded yet |',
      '| nftables | 110 µs (p90 160; 40 entries) | 112 µs (p90 162; 11,040 entries) |',
    ]);
  });
});
