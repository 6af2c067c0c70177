// Looking one Service or one frontend up in a model, and the JSON shape `dplab explain --json`
// and the checks share.
import { splitIpPort } from './addr.ts';
import type { DataplaneModel, ServiceView } from './model.ts';
import { ANY_NODE_IP } from './model.ts';

export function findService(model: DataplaneModel, name: string): ServiceView | null {
  const ports = model.services.filter((sp) => sp.service === name);
  if (ports.length === 0) return null;
  return { service: name, frontends: ports.flatMap((sp) => sp.frontends.map((fe) => ({ ...fe, portName: sp.portName }))) };
}

/** "ip:port" (optionally "/TCP"); a NodePort listed on 0.0.0.0 also matches any node address. */
export function findFrontend(model: DataplaneModel, address: string): ServiceView | null {
  const want = splitIpPort(address);
  if (!want) return null;
  const matches = (ip: string) => (fe: { ip: string; port: number; protocol: string }) =>
    fe.ip === ip && fe.port === want.port && (want.protocol === null || fe.protocol === want.protocol);
  for (const ip of [want.ip, ANY_NODE_IP]) {
    for (const sp of model.services) {
      const hits = sp.frontends.filter(matches(ip)).filter((fe) => ip === want.ip || fe.type === 'NodePort');
      if (hits.length) return { service: sp.service, frontends: hits.map((fe) => ({ ...fe, portName: sp.portName })) };
    }
  }
  return null;
}

import type { JsonFrontend } from '../wire/explain.ts';
export interface JsonView {
  service: string | null;
  frontends: JsonFrontend[];
}

/** Exactly the public JSON shape: internal fields (path, via, chooser…) stay out. */
export function toJson(view: ServiceView): JsonView {
  return {
    service: view.service,
    frontends: view.frontends.map((fe) => ({
      type: fe.type,
      ip: fe.ip,
      port: fe.port,
      protocol: fe.protocol,
      backends: fe.backends.map((b) => ({ ip: b.ip, port: b.port, share: b.share })),
      localOnly: fe.localOnly,
      dropsWithoutLocalEndpoints: fe.dropsWithoutLocalEndpoints,
      affinity: fe.affinity ? { timeoutSeconds: fe.affinity.timeoutSeconds } : null,
      ...(fe.sourceRanges?.length ? { sourceRanges: [...fe.sourceRanges] } : {}),
    })),
  };
}
