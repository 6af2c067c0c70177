// iptables mode (iptables-nft in kind nodes): a TRACE rule in the raw table's PREROUTING (from pods
// and outside) and OUTPUT (from the node itself), scoped to the flow and to a connection's first
// packet (the only one nat sees), read with `xtables-monitor --trace`.
import type { TraceMethod } from './method.ts';
import type { TraceFlow } from './flow.ts';
import { TRACE_MARK } from './marker.ts';
import { parseXtablesMonitor } from './xtables-monitor.ts';

const HOOKS = ['PREROUTING', 'OUTPUT'];
const MARKED = new RegExp(`--comment "?${TRACE_MARK}[:\\s"]`);
/** Waits for the xtables lock instead of failing while kube-proxy writes its rules. */
const WAIT = ['-w', '5'];

function match(flow: TraceFlow): string[] {
  return [
    ...(flow.client ? ['-s', `${flow.client}/32`] : []),
    '-d',
    `${flow.ip}/32`,
    '-p',
    flow.protocol,
    '-m',
    flow.protocol,
    '--dport',
    String(flow.port),
    ...(flow.protocol === 'tcp' ? ['--tcp-flags', 'SYN,ACK,FIN,RST', 'SYN'] : []),
  ];
}

export const iptablesTrace: TraceMethod = {
  id: 'xtables-monitor',
  tool: 'xtables-monitor',
  enable: (flow, tag) =>
    HOOKS.map((hook) => ({
      argv: [
        'iptables',
        ...WAIT,
        '-t',
        'raw',
        '-I',
        hook,
        '1',
        ...match(flow),
        '-m',
        'comment',
        '--comment',
        `${TRACE_MARK}:${tag}`,
        '-j',
        'TRACE',
      ],
    })),
  monitor: ['xtables-monitor', '--trace', '-4'],
  unseen: 'a connection the node already tracked is not walked again',
  list: { argv: ['iptables', ...WAIT, '-t', 'raw', '-S'] },
  leftovers: (listing) => listing.split('\n').filter((l) => l.startsWith('-A ') && MARKED.test(l)),
  // Our rules' words hold no spaces or quotes (the comment is `dplab-trace:<tag>`), so `-S`'s line splits back into argv.
  remove: (rules) => rules.map((r) => ({ argv: ['iptables', ...WAIT, '-t', 'raw', '-D', ...r.slice(3).split(/\s+/).map(unquote)] })),
  parse: parseXtablesMonitor,
};

const unquote = (w: string) => w.replace(/^"(.*)"$/, '$1');
