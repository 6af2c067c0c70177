/**
 * Pod events as the kubelet posts them (source component "kubelet", the node as host), so
 * `kubectl describe pod` and `kubectl get events` show what the stand-in did and refused.
 */
import { randomBytes } from 'node:crypto';
import type { ApiClient } from './api-client.ts';

export interface EventTarget {
  metadata: { name: string; namespace?: string; uid: string; resourceVersion?: string };
}

export async function postPodEvent(
  api: ApiClient,
  nodeName: string,
  pod: EventTarget,
  type: 'Normal' | 'Warning',
  reason: string,
  message: string,
  fieldPath?: string,
): Promise<void> {
  const ns = pod.metadata.namespace ?? 'default';
  const now = new Date().toISOString();
  await api.request('POST', `/api/v1/namespaces/${encodeURIComponent(ns)}/events`, {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${pod.metadata.name}.${Date.now().toString(16)}${randomBytes(2).toString('hex')}`, namespace: ns },
    involvedObject: {
      kind: 'Pod',
      apiVersion: 'v1',
      namespace: ns,
      name: pod.metadata.name,
      uid: pod.metadata.uid,
      resourceVersion: pod.metadata.resourceVersion,
      ...(fieldPath ? { fieldPath } : {}),
    },
    reason,
    message,
    type,
    source: { component: 'kubelet', host: nodeName },
    reportingComponent: 'kubelet',
    reportingInstance: nodeName,
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  });
}
