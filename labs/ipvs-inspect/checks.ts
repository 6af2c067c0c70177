/**
 * Checks of ipvs-inspect. IPVS keeps Services in kernel hash tables that `ipvsadm -Ln` prints
 * (once installed: kind nodes do not ship it) and `/proc/net/ip_vs` shows in hex; the ClusterIP
 * itself is an address on the dummy interface kube-ipvs0, so the node accepts packets for it.
 */
import { parse as parseYaml } from 'yaml';
import { parse } from '../../scripts/dataplane/index.ts';
import { evaluateAnswer, gatherAnswer } from '../../scripts/labs/checks/answer.ts';
import { defineCheck, fact, fail, firstItem, gatherNodeCommand, getByName, pass, type KubeList } from '../../scripts/labs/checks/index.ts';
import { gatherNodeRules, isVerdict, pickNode, serviceFrontend } from '../../scripts/labs/checks/node-rules.ts';
import type { RulesObservation } from '../../scripts/labs/checks/rules.ts';
import type { Frontend } from '../../scripts/dataplane/model.ts';
import type { Fact, Verdict } from '../../scripts/labs/checks/types.ts';
import { observationsOf, schemas } from '../../scripts/labs/checks/schemas.ts';

/** The node the learner installs ipvsadm on and the checks read. */
const NODE_ROLE = 'worker';
const IPVSADM = ['ipvsadm', '-Ln'] as const;
const KUBE_IPVS0 = ['ip', '-4', 'addr', 'show', 'dev', 'kube-ipvs0'] as const;

/** IPVS prints the scheduler first in the flags column: "rr", "lc", "rr, persistent". */
function schedulerOf(f: Frontend): string {
  return f.chooser.split(',')[0].trim();
}

function noVirtualServer(rules: RulesObservation, key: string, clusterIP: string | undefined): Verdict {
  return fail(
    `No IPVS virtual server for ${key} (${clusterIP ?? '?'}:80) on ${rules.node} yet; kube-proxy adds it within seconds of the Service appearing.`,
    [fact(`virtual server ${clusterIP ?? '?'}:80 on ${rules.node}`, 'present', 'none', false)],
    true,
  );
}

function realServerFacts(f: Frontend, node: string, want = 3): Fact[] {
  return [
    fact(`virtual server ${f.protocol} ${f.ip}:${f.port} on ${node}`, 'present', `scheduler ${schedulerOf(f)}`, true),
    fact('real servers (pods, Masq)', want, f.backends.length),
    fact(
      'real server addresses',
      'the web pods on :8080',
      f.backends.map((b) => `${b.ip}:${b.port}`),
      f.backends.length === want,
    ),
  ];
}

export const installIpvsadmCheck = defineCheck({
  observations: observationsOf({ rules: schemas.rules }),
  async gather(ctx) {
    const node = await pickNode(ctx, NODE_ROLE);
    const rules = await gatherNodeRules(ctx, 'web', node, IPVSADM);
    return { rules: { ...rules, format: 'ipvsadm' as const } };
  },
  evaluate(obs, ctx) {
    const { rules } = obs;
    if (rules.dump.exitCode !== 0) {
      // Docker says `executable file not found in $PATH` (exit 126/127); `ip netns exec`, which
      // the sim provider runs instead, says `exec of "ipvsadm" failed: No such file or directory`.
      const missing =
        rules.dump.exitCode === 127 || /executable file not found|not found|No such file or directory/.test(rules.dump.stderr);
      const f = fact(
        `ipvsadm -Ln on ${rules.node}`,
        'prints the IPVS table',
        missing ? 'ipvsadm is not installed' : rules.dump.stderr.trim() || `exit code ${rules.dump.exitCode}`,
        false,
      );
      return missing
        ? fail(
            `ipvsadm is not installed on ${rules.node} yet: kind node images do not include it. Install it with apt-get inside the node.`,
            [f],
          )
        : fail(`ipvsadm runs on ${rules.node} but failed (exit code ${rules.dump.exitCode}); are the ip_vs modules loaded on the host?`, [
            f,
          ]);
    }
    const found = serviceFrontend(parse, 'web', rules, ctx);
    if (isVerdict(found)) return found;
    if (!found.frontend) return noVirtualServer(rules, found.key, found.clusterIP);
    const facts = [
      fact(`ipvsadm -Ln on ${rules.node}`, 'prints the IPVS table', `${found.model.entries} ${found.model.entriesLabel}`, true),
      ...realServerFacts(found.frontend, rules.node),
    ];
    const wrong = facts.find((f) => !f.ok);
    if (wrong)
      return fail(
        `ipvsadm works, but web's virtual server does not look right yet: ${wrong.label} is ${wrong.seen}, expected ${wrong.expected}.`,
        facts,
        true,
      );
    return pass(
      `ipvsadm is installed on ${rules.node}: web's ClusterIP ${found.frontend.ip}:80 is a virtual server with ${found.frontend.backends.length} real servers, scheduler ${schedulerOf(found.frontend)}.`,
      facts,
    );
  },
});

/** Addresses `ip addr show dev kube-ipvs0` lists (`inet 10.97.0.1/32 scope global kube-ipvs0`). */
function boundAddresses(text: string): string[] {
  return [...text.matchAll(/^\s*inet (\d+\.\d+\.\d+\.\d+)\/32\b/gm)].map((m) => m[1]);
}

export const virtualServerCheck = defineCheck({
  observations: observationsOf({ rules: schemas.rules, dummy: schemas.command, answer: schemas.answer }),
  async gather(ctx) {
    const node = await pickNode(ctx, NODE_ROLE);
    const [rules, dummy, answer] = await Promise.all([
      gatherNodeRules(ctx, 'web', node),
      gatherNodeCommand(ctx, node, KUBE_IPVS0),
      gatherAnswer(ctx, 'web-ipvs'),
    ]);
    return { rules, dummy, answer };
  },
  evaluate(obs, ctx) {
    const found = serviceFrontend(parse, 'web', obs.rules, ctx);
    if (isVerdict(found)) return found;
    const fe = found.frontend;
    if (!fe) return noVirtualServer(obs.rules, found.key, found.clusterIP);
    const bound = boundAddresses(obs.dummy.stdout);
    const facts = [
      fact(
        `addresses on kube-ipvs0 of ${obs.rules.node}`,
        `includes ${fe.ip}/32`,
        obs.dummy.exitCode === 0 ? `${bound.length} addresses${bound.includes(fe.ip) ? `, ${fe.ip} among them` : ''}` : 'no kube-ipvs0',
        bound.includes(fe.ip),
      ),
      ...realServerFacts(fe, obs.rules.node),
    ];
    const vs = evaluateAnswer(
      {
        configMap: 'web-ipvs',
        key: 'virtual-server',
        truth: `${fe.ip}:${fe.port}`,
        what: "web's virtual server",
        same: (a, t) => a.trim().replace(/^(TCP|tcp)\s+/, '') === t,
      },
      obs.answer,
      ctx,
    );
    const sched = evaluateAnswer(
      { configMap: 'web-ipvs', key: 'scheduler', truth: schedulerOf(fe), what: 'its scheduler' },
      obs.answer,
      ctx,
    );
    const all = [...facts, ...vs.facts, ...sched.facts];
    const wrong = [vs, sched].find((v) => v.status === 'fail');
    if (wrong) return { ...wrong, facts: all };
    if (!facts[0].ok)
      return fail(
        `${fe.ip} is not bound to kube-ipvs0 on ${obs.rules.node}; kube-proxy binds every ClusterIP there so the node accepts the packets IPVS then forwards.`,
        all,
      );
    return pass(
      `Right: ${fe.ip} is bound to kube-ipvs0, so the node accepts packets for it, and IPVS forwards them to ${fe.backends.length} real servers with ${schedulerOf(fe)}.`,
      all,
    );
  },
});

/** `ipvs.scheduler` from the kube-proxy ConfigMap's `config.conf` ("" means the default, rr). */
function configuredScheduler(configmaps: KubeList): string | null {
  const text = (firstItem(configmaps)?.data as Record<string, string> | undefined)?.['config.conf'];
  if (typeof text !== 'string') return null;
  try {
    const conf = parseYaml(text) as { ipvs?: { scheduler?: string } } | null;
    return conf?.ipvs?.scheduler ?? '';
  } catch {
    return null;
  }
}

export const switchToLcCheck = defineCheck({
  observations: observationsOf({ config: schemas.kubeList, rules: schemas.rules }),
  async gather(ctx) {
    const node = await pickNode(ctx, NODE_ROLE);
    const [config, rules] = await Promise.all([
      getByName(ctx, 'configmaps', 'kube-proxy', 'kube-system'),
      gatherNodeRules(ctx, 'web', node),
    ]);
    return { config, rules };
  },
  evaluate(obs, ctx) {
    const configured = configuredScheduler(obs.config);
    const cf = fact(
      'kube-proxy ConfigMap, ipvs.scheduler',
      'lc',
      configured === null ? 'unreadable' : configured === '' ? '"" (default: rr)' : configured,
      configured === 'lc',
    );
    const found = serviceFrontend(parse, 'web', obs.rules, ctx);
    if (isVerdict(found)) return { ...found, facts: [cf, ...found.facts] };
    const fe = found.frontend;
    if (!fe) return noVirtualServer(obs.rules, found.key, found.clusterIP);
    const seen = schedulerOf(fe);
    const facts = [cf, fact(`scheduler of ${fe.ip}:${fe.port} on ${obs.rules.node}`, 'lc', seen)];
    if (!cf.ok)
      return fail(
        `kube-proxy's configuration still says scheduler ${cf.seen}; set \`ipvs.scheduler: lc\` in the \`kube-proxy\` ConfigMap of kube-system.`,
        facts,
      );
    if (!facts[1].ok) {
      return fail(
        `The ConfigMap says lc, but web's virtual server still uses ${seen}: kube-proxy reads its configuration only when it starts. Restart the kube-proxy DaemonSet.`,
        facts,
        true,
      );
    }
    return pass(`web's virtual server now uses lc: each new connection goes to the real server with the fewest active connections.`, facts);
  },
});
