/**
 * Restorers (a lab's `setup.restore`): the cluster-wide changes some labs ask for, undone on
 * setup and reset so that re-running a lab starts from the cluster as it was. Each one looks
 * first and changes only what it finds, so a reset on an untouched cluster changes nothing.
 */
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { Restorer } from '../../scripts/labs/schema.ts';

/** A Debian package a step installs inside the kind nodes with apt-get (`ipvsadm`). */
export function nodePackage(pkg: string): Restorer {
  if (!/^[a-z0-9][a-z0-9+.-]*$/.test(pkg)) throw new Error(`not a package name: ${pkg}`);
  return {
    what: `${pkg} installed in the nodes`,
    async run({ cluster, signal }) {
      const removed: string[] = [];
      for (const node of await cluster.nodes({ signal })) {
        const r = await cluster.nodeExec(
          node,
          [
            'sh',
            '-c',
            `if dpkg -s ${pkg} >/dev/null 2>&1; then DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq ${pkg} >/dev/null 2>&1 && echo removed; fi`,
          ],
          { signal },
        );
        if (r.stdout.includes('removed')) removed.push(node);
      }
      return removed.length ? `removed ${pkg} from ${removed.join(', ')}` : null;
    },
  };
}

/** What the restorers read of `kubectl get … -o json`: names of listed nodes, a ConfigMap's data. */
const NODE_NAMES = z
  .object({ items: z.array(z.object({ metadata: z.object({ name: z.string() }).passthrough() }).passthrough()).optional() })
  .passthrough();
const CONFIG_MAP = z.object({ data: z.record(z.string(), z.string()).optional() }).passthrough();

/** A label a step puts on nodes (`dplab-web=yes`). */
export function nodeLabel(key: string): Restorer {
  return {
    what: `node label ${key}`,
    async run({ cluster, signal }) {
      const list = await cluster.kubectlJson(['get', 'nodes', '-l', key], NODE_NAMES, { signal });
      const names = (list.items ?? []).map((n) => n.metadata.name);
      if (names.length === 0) return null;
      await cluster.kubectl(['label', 'nodes', ...names, `${key}-`], { signal });
      return `removed label ${key} from ${names.join(', ')}`;
    },
  };
}

const SCHEDULER_LINE = /^(\s+scheduler:).*$/m;

/** kube-proxy's IPVS scheduler back to the default ("", i.e. rr), with the restart that makes it count. */
export function ipvsSchedulerDefault(): Restorer {
  return {
    what: "kube-proxy's IPVS scheduler",
    async run({ cluster, signal, mode }) {
      if (mode !== 'ipvs') return null;
      // A list, so a cluster whose kube-proxy has no ConfigMap (one kubeadm did not make) is nothing to restore.
      const list = await cluster.kubectlJson(
        ['-n', 'kube-system', 'get', 'configmaps', '--field-selector', 'metadata.name=kube-proxy'],
        z.object({ items: z.array(CONFIG_MAP) }),
        { signal },
      );
      const cm = list.items[0];
      if (!cm) return null;
      const conf = cm.data?.['config.conf'];
      if (typeof conf !== 'string') return null;
      const scheduler = (parseYaml(conf) as { ipvs?: { scheduler?: string } } | null)?.ipvs?.scheduler ?? '';
      if (scheduler === '' || !SCHEDULER_LINE.test(conf)) return null;
      const restored = { ...cm, data: { ...cm.data, 'config.conf': conf.replace(SCHEDULER_LINE, '$1 ""') } };
      await cluster.kubectl(['apply', '-f', '-'], { signal, input: JSON.stringify(restored) });
      await cluster.kubectl(['-n', 'kube-system', 'rollout', 'restart', 'daemonset', 'kube-proxy'], { signal });
      await cluster.kubectl(['-n', 'kube-system', 'rollout', 'status', 'daemonset', 'kube-proxy', '--timeout=120s'], {
        signal,
        timeoutMs: 150_000,
      });
      return `kube-proxy's IPVS scheduler set back from ${scheduler} to the default (rr), kube-proxy restarted`;
    },
  };
}
