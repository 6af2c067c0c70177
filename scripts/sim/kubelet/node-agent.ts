/**
 * Registers this Node, keeps its Lease renewed and its status fresh, and learns its pod CIDR
 * (allocated by the controller-manager's node IPAM controller).
 */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { ApiClient, ApiError } from './api-client.ts';
import type { KubeletConfig } from './config.ts';
import { leaseObject, microTime, nodeObject, nodeStatus, type MachineFacts } from './node-object.ts';

/** The kubelet's defaults: renew the lease every 10 s of a 40 s lease, post status every 10 s. */
const LEASE_DURATION_SECONDS = 40;
const LEASE_RENEW_MS = 10_000;
const STATUS_UPDATE_MS = 10_000;
const POD_CIDR_POLL_MS = 500;

export async function machineFacts(): Promise<MachineFacts> {
  const read = async (p: string, fallback: string) => (await readFile(p, 'utf8').catch(() => fallback)).trim();
  const osRelease = await read('/etc/os-release', '');
  return {
    cpus: os.cpus().length,
    memoryKi: Math.floor(os.totalmem() / 1024),
    kernelVersion: os.release(),
    osImage: /^PRETTY_NAME="?([^"\n]*)"?/m.exec(osRelease)?.[1] ?? 'Linux',
    architecture: ({ x64: 'amd64', arm64: 'arm64' } as Record<string, string>)[os.arch()] ?? os.arch(),
    machineID: (await read('/etc/machine-id', '')).replace(/-/g, '') || '0'.repeat(32),
    bootID: await read('/proc/sys/kernel/random/boot_id', ''),
  };
}

interface NodeRead {
  metadata: { uid: string; labels?: Record<string, string> };
  spec?: { podCIDR?: string; podCIDRs?: string[] };
}

export class NodeAgent {
  private timers: NodeJS.Timeout[] = [];
  private since = new Date().toISOString();
  private uid = '';

  constructor(
    private readonly api: ApiClient,
    private readonly config: KubeletConfig,
    private readonly facts: MachineFacts,
    private readonly log: (msg: string) => void,
  ) {}

  private get nodePath() {
    return `/api/v1/nodes/${encodeURIComponent(this.config.nodeName)}`;
  }

  /** Create the Node (or take over one left by an earlier run) and start the heartbeats. */
  async register(): Promise<void> {
    const now = new Date().toISOString();
    const desired = nodeObject(this.config, this.facts, now);
    try {
      const created = await this.api.request<NodeRead>('POST', '/api/v1/nodes', { ...desired, status: undefined });
      this.uid = created.metadata.uid;
      this.log(`registered node ${this.config.nodeName}`);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 409)) throw err;
      const patched = await this.api.mergePatch<NodeRead>(this.nodePath, {
        metadata: { labels: desired.metadata.labels, annotations: desired.metadata.annotations },
      });
      this.uid = patched.metadata.uid;
      this.log(`node ${this.config.nodeName} already registered; updated it`);
    }
    await this.postStatus();
    await this.renewLease();
    this.timers.push(
      setInterval(() => void this.renewLease().catch((e) => this.log(`lease renewal failed: ${(e as Error).message}`)), LEASE_RENEW_MS),
    );
    this.timers.push(
      setInterval(
        () => void this.postStatus().catch((e) => this.log(`node status update failed: ${(e as Error).message}`)),
        STATUS_UPDATE_MS,
      ),
    );
  }

  async postStatus(): Promise<void> {
    await this.api.mergePatch(`${this.nodePath}/status`, {
      status: nodeStatus(this.config, this.facts, new Date().toISOString(), this.since),
    });
  }

  async renewLease(): Promise<void> {
    const path = `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${encodeURIComponent(this.config.nodeName)}`;
    const now = microTime(new Date());
    try {
      await this.api.mergePatch(path, {
        spec: { holderIdentity: this.config.nodeName, leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime: now },
      });
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
      await this.api.request(
        'POST',
        '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
        leaseObject(this.config.nodeName, this.uid, LEASE_DURATION_SECONDS, now),
      );
    }
  }

  /** Wait until the controller-manager has given this node its pod CIDR. */
  async podCidr(signal: AbortSignal): Promise<string> {
    let logged = false;
    while (!signal.aborted) {
      const node = await this.api.get<NodeRead>(this.nodePath, signal);
      const cidr = node.spec?.podCIDRs?.find((c) => c.includes('.')) ?? node.spec?.podCIDR;
      if (cidr) return cidr;
      if (!logged) this.log('waiting for the controller-manager to allocate this node a pod CIDR');
      logged = true;
      await new Promise((r) => setTimeout(r, POD_CIDR_POLL_MS));
    }
    throw new Error('stopped');
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }
}
