/**
 * What `dplab` can do: every sub-command's name, its one line for `dplab help` and its usage,
 * in the order `dplab help` lists them. Data only, so that `dplab help`, `dplab help <command>`
 * and the list shown for an unknown command load nothing else. Each command's file
 * (scripts/commands/<name>.ts) takes its entry from here with commandInfo() and adds what it
 * does; scripts/commands/index.ts loads that file when the command runs.
 */
import { MODES } from '../wire/modes.ts';
import { FORMATS } from '../wire/formats.ts';
import { SIM_COMPONENTS } from '../sim/components.ts';
import type { Command } from './command.ts';

/** A command as `dplab help` knows it: everything but its code. */
export type CommandInfo = Pick<Command, 'name' | 'summary' | 'usage'>;

const ENTRIES = {
  serve: {
    summary: 'Serve the course, the runner API and the terminals on 127.0.0.1.',
    usage:
      "dplab serve [--host H] [--port P] [--allow-host NAME]… [--max-terminals N] [--build-if-needed] [--no-warm]   (env: HOST, PORT, DPLAB_TOKEN, DPLAB_ALLOW_HOSTS=a,b, DPLAB_MAX_TERMINALS, DPLAB_NO_WARM=1)\n  --no-warm   never start the next lab's cluster ahead while you work (a lab page asks for it when memory allows)",
  },
  build: {
    summary: 'Build the course into dist/ (serve --build-if-needed does it when a source changed).',
    usage: 'dplab build',
  },
  portal: {
    summary: 'Run a workshop: a join page for learners, a seat each, and the instructor dashboard.',
    usage: `dplab portal [--lab ID] [--seats N] [--max-seats M] [--warm MODE]… [--code CODE] [--port P] [--idle-minutes N]
             [--host ADDR --behind-tls --public-host NAME] [--backend local|kubernetes] [--shared-user]
             [--seat-memory SIZE] [--seat-pids N]

  --seats N       make N seats before anyone joins (with --warm, their clusters too); more are made on demand up to --max-seats (default 30)
  --warm MODE     bring each seat's MODE cluster up ahead (a hot start); check the host first with \`dplab doctor --seats N --mode MODE\`
  --lab ID        the lab learners start on and the dashboard tracks (default: the first lab)
  --backend B     where seats run: local (a runner process per seat on this host, the default) or kubernetes (a pod per seat
                  in the portal's namespace; DPLAB_SEAT_* settings, see README "Workshops on Kubernetes")
  --shared-user   (local) run every seat's shells as the portal's own user; by default a portal run as root on Linux
                  gives each seat a Unix user of its own, so one learner's shell cannot read another seat's files
  --seat-memory SIZE, --seat-pids N
                  (local, seat users) each seat's memory and process limit, a cgroup per seat where the host has cgroups
                  (default 2G and 512; env DPLAB_SEAT_MEMORY, DPLAB_SEAT_PIDS; see README "Seat limits")
  --behind-tls    TLS is terminated in front of the portal (an Ingress, Caddy, nginx): allows a non-loopback --host and https://<public host> origins
  (env: DPLAB_PORTAL_TOKEN sets the instructor token)`,
  },
  up: {
    summary: 'Start (or reuse) the kind cluster of a dataplane mode',
    usage: `dplab up <${MODES.join('|')}> [--retain]\n\n  --retain  keep a half-made cluster when something fails (for debugging)`,
  },
  down: {
    summary: 'Delete the kind cluster of a mode (or of all modes)',
    usage: `dplab down <${MODES.join('|')}> | --all`,
  },
  status: {
    summary: 'Show the lab clusters: absent, provisioning, ready or broken',
    usage: 'dplab status [--json]',
  },
  kubeconfig: {
    summary: "Print the path of a mode's kubeconfig (for `export KUBECONFIG=…`)",
    usage: `dplab kubeconfig <${MODES.join('|')}>`,
  },
  doctor: {
    summary: 'Check this machine for Docker, kind, kubectl, kernel settings and memory',
    usage: `dplab doctor [--mode <${MODES.join('|')}>] [--seats N] [--json]\n\n  Without --mode every mode's checks run (memory for one cluster). --seats N checks room for a workshop of N seats on this host, each with one cluster of the mode (or of every mode). Exits non-zero when a check fails.`,
  },
  labs: {
    summary: 'List the labs with their modes, steps and concepts',
    usage: 'dplab labs [--json]',
  },
  check: {
    summary: "Check a lab step (or every step in order) against the lab's cluster",
    usage:
      'dplab check <lab> [<step>] [--mode <mode>] [--json] [--verbose]\n  exit code 0: passed, 1: not done yet, 3: the cluster could not be checked',
  },
  solve: {
    summary: "Apply a lab step's solution (the commands a learner would type)",
    usage: 'dplab solve <lab> <step> [--mode <mode>]',
  },
  reset: {
    summary: 'Reset a lab: recreate its namespace and setup (--step: then solve and check every step before it)',
    usage: 'dplab reset <lab> [--step <step>] [--mode <mode>]   (with --step, the same as `dplab goto <lab> <step> --reset`)',
  },
  goto: {
    summary: 'Bring a lab to the start of a step: setup, then each earlier step solved and checked (--reset: reset the lab first)',
    usage:
      'dplab goto <lab> <step> [--mode <mode>] [--reset]\n  exit code 0: ready, 1: an earlier step did not pass its check, 3: the cluster could not be reached',
  },
  'verify-labs': {
    summary: 'Author check: per lab, mode and step, setup → check fails → solve → check passes',
    usage:
      "dplab verify-labs [--lab <id>] [--mode <mode>] [--record] [--provider sim]\n       dplab verify-labs --reword [--lab <id>]\n  --record writes each check's observations under labs/<id>/observations/ (marked recorded, with the provider and versions)\n  --provider sim runs the iptables and nftables labs on sim clusters, starting them when needed\n  --reword replays the stored observations through the checks as they are now and writes each new message into its file (no cluster); a changed verdict is listed, not written",
  },
  explain: {
    summary: "Show how a node's dataplane forwards one Service: frontends, backends and each backend's share",
    usage: [
      `dplab explain --input <file> --format ${FORMATS.join('|')} (--service <ns/name> | --frontend <ip:port>) [--json | --mermaid]`,
      '              [--names <file.json>] [--hz <kernel HZ>]   (names: {"10.96.45.112:80": "default/web"} for IPVS / cilium text)',
      '              [--service-cidr <cidr>[,<cidr>]]   (IPVS: which virtual servers are ClusterIPs, else ones outside 10.96.0.0/12 are "unknown"; `kubectl get servicecidrs` shows it)',
      'dplab explain <mode> <ns/name> [--node <node>] [--json | --mermaid]   (live: reads the node of a running lab cluster, default the first worker)',
    ].join('\n'),
  },
  trace: {
    summary: "Trace requests to a Service through a node's real rules: the path each took and where it went",
    usage: [
      'dplab trace <mode> <ns/name> [--from <ns/pod>] [--node <node>] [--port <port>] [--node-port] [--count N] [--json]',
      '  iptables (xtables-monitor) and nftables (nft monitor) modes; requests come from the pod (curl in it) or the node itself',
      'dplab trace <mode> --sweep [--node <node>]   (remove trace rules a stopped runner left on the nodes)',
    ].join('\n'),
  },
  bench: {
    summary: 'Run the benchmarks (all, or the one named); they print figures beside a peer and a limit',
    usage: 'dplab bench [<name> [args…]]   (names: the files in test/bench/; they run the runner on the test doubles, from a checkout)',
  },
  'sim-build': {
    summary: "Build (or reuse) the sim provider's real components with Go, into the cache outside the repository",
    usage: `dplab sim-build [--only <name,…>]\n  components: ${SIM_COMPONENTS.map((c) => c.name).join(', ')}\n  cache: $DPLAB_SIM_CACHE or ~/.cache/dplab/sim`,
  },
} as const satisfies Record<string, Omit<CommandInfo, 'name'>>;

/** The name of a `dplab` sub-command. */
export type CommandName = keyof typeof ENTRIES;

/** Every command, in help order. */
export const CATALOGUE: readonly CommandInfo[] = Object.entries(ENTRIES).map(([name, entry]) => ({ name, ...entry }));

export function isCommandName(name: string | undefined): name is CommandName {
  return name !== undefined && Object.hasOwn(ENTRIES, name);
}

/** One command's name, summary and usage (its file spreads them into its Command). */
export function commandInfo(name: CommandName): CommandInfo {
  return { name, ...ENTRIES[name] };
}
