/**
 * The kubelet stand-in's configuration: one JSON file per node, written by the sim provider and
 * read by `scripts/sim/kubelet/main.ts --config <file>`. Both sides import this file, so the
 * shape is defined once.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { DplabError } from '../../base/errors.ts';

/** A Linux network namespace name as `ip netns` accepts it (also used in file names). */
const netnsName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/, 'a network namespace name: letters, digits, ".", "_", "-"');

/** An RFC 1123 DNS subdomain (what a Node's name must be). */
const dnsSubdomain = z
  .string()
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, 'a DNS subdomain: lower-case letters, digits, "-", "."');

const ipv4 = z.string().regex(/^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/, 'an IPv4 address');

const kubeletConfigSchema = z
  .object({
    /** The Node object's name and the `kubernetes.io/hostname` label (kind-like: `dplab-iptables-worker`). */
    nodeName: dnsSubdomain,
    /** The node's address on the node network; InternalIP, and where the exec server listens (:10250). */
    nodeIP: ipv4,
    /** The node's network namespace (made by the provider, with its bridge port and pod-CIDR routes). */
    netns: netnsName,
    /** Kubeconfig the stand-in authenticates with (a client certificate or a token). */
    kubeconfig: z.string().min(1),
    /** Folder with the built binaries: `agnhost`, `dplab-exec-server`. */
    binDir: z.string().min(1),
    /** This node's own state: pod records, container logs, the exec server's certificate. */
    stateDir: z.string().min(1),
    /** Extra Node labels, e.g. `node-role.kubernetes.io/control-plane: ""` on the control plane. */
    labels: z.record(z.string(), z.string()).default({}),
    /** The cluster DNS Service's address(es), written to each pod's resolv.conf. */
    clusterDNS: z.array(ipv4).min(1),
    /** The cluster's DNS domain, usually `cluster.local`. */
    clusterDomain: z.string().min(1).default('cluster.local'),
    /**
     * CA that signed the API server's kubelet client certificate (--kubelet-client-certificate).
     * When set, the exec server on :10250 requires a client certificate signed by it; without
     * it, anyone on the node network could exec into pods.
     */
    clientCAFile: z.string().min(1).optional(),
    /** The exec server's serving certificate and key (PEM); a self-signed pair is made when left out. */
    servingCertFile: z.string().min(1).optional(),
    servingKeyFile: z.string().min(1).optional(),
    /** Taints for the Node (kind's control plane has `node-role.kubernetes.io/control-plane:NoSchedule`). */
    taints: z
      .array(
        z.object({ key: z.string().min(1), value: z.string().optional(), effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']) }),
      )
      .default([]),
  })
  .strict()
  .refine((c) => !c.servingCertFile === !c.servingKeyFile, {
    message: 'servingCertFile and servingKeyFile go together',
    path: ['servingKeyFile'],
  });

export type KubeletConfig = z.infer<typeof kubeletConfigSchema>;
/** What a writer passes in (defaults may be left out). */
export type KubeletConfigInput = z.input<typeof kubeletConfigSchema>;

/** Validate a parsed config; a clear error names each bad field. */
export function parseKubeletConfig(value: unknown, source = 'kubelet config'): KubeletConfig {
  const result = kubeletConfigSchema.safeParse(value);
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  throw new DplabError(`${source} is not valid: ${problems.join('; ')}`);
}

export async function loadKubeletConfig(file: string): Promise<KubeletConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new DplabError(`cannot read the kubelet config ${file}: ${(err as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new DplabError(`${file} is not JSON: ${(err as Error).message}`);
  }
  return parseKubeletConfig(value, file);
}
