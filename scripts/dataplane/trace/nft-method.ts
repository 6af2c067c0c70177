// nftables mode: a table of its own, `ip dplab-trace`, whose chains at prerouting and output (ahead
// of raw) set `meta nftrace` for the flow's first packets, read with `nft -a monitor trace`.
// `create table` fails when the table exists, so a second trace on the node cannot start.
import type { TraceMethod } from './method.ts';
import type { TraceFlow } from './flow.ts';
import { TRACE_MARK } from './marker.ts';
import { parseNftMonitor } from './nft-monitor.ts';

const HOOKS = ['prerouting', 'output'];

function match(flow: TraceFlow): string {
  return [
    flow.client ? `ip saddr ${flow.client}` : '',
    `ip daddr ${flow.ip}`,
    `${flow.protocol} dport ${flow.port}`,
    flow.protocol === 'tcp' ? 'tcp flags syn / fin,syn,rst,ack' : '',
  ]
    .filter(Boolean)
    .join(' ');
}

export const nftTrace: TraceMethod = {
  id: 'nft-monitor',
  tool: 'nft',
  enable: (flow, tag) => [
    {
      argv: ['nft', '-f', '-'],
      input: [
        `create table ip ${TRACE_MARK} { comment "${TRACE_MARK}:${tag}"; }`,
        ...HOOKS.flatMap((hook) => [
          `add chain ip ${TRACE_MARK} ${hook} { type filter hook ${hook} priority raw - 1; policy accept; }`,
          `add rule ip ${TRACE_MARK} ${hook} ${match(flow)} meta nftrace set 1 comment "${TRACE_MARK}:${tag}"`,
        ]),
        '',
      ].join('\n'),
    },
  ],
  monitor: ['nft', '-a', 'monitor', 'trace'],
  unseen: 'a connection the node already tracked is not walked again',
  list: { argv: ['nft', 'list', 'tables'] },
  leftovers: (listing) =>
    listing
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => /^table \S+ dplab-trace\S*$/.test(l)),
  remove: (tables) => tables.map((t) => ({ argv: ['nft', 'delete', ...t.split(' ')] })),
  parse: parseNftMonitor,
};
