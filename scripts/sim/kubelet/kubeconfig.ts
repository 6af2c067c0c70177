/**
 * Reads what the stand-in needs from a kubeconfig: the API server's URL and CA, and a client
 * certificate or a bearer token (current context). File references are resolved against the
 * kubeconfig's folder, as kubectl does.
 */
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse } from 'yaml';
import { DplabError } from '../../base/errors.ts';

export interface ApiCredentials {
  server: string;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  token?: string;
  insecure?: boolean;
}

interface Named<T> {
  name: string;
  [k: string]: unknown;
  cluster?: T;
  user?: T;
  context?: T;
}

export async function loadKubeconfig(file: string): Promise<ApiCredentials> {
  let doc: Record<string, unknown>;
  try {
    doc = parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new DplabError(`cannot read kubeconfig ${file}: ${(err as Error).message}`);
  }
  const base = dirname(file);
  const pick = <T>(list: unknown, name: string | undefined, field: 'cluster' | 'user' | 'context'): T => {
    const items = (Array.isArray(list) ? list : []) as Array<Named<T>>;
    const found = name === undefined ? items[0] : items.find((i) => i.name === name);
    if (!found?.[field]) throw new DplabError(`kubeconfig ${file} has no ${field} ${name ?? ''}`.trim());
    return found[field] as T;
  };
  const ctx = pick<{ cluster: string; user: string }>(doc.contexts, (doc['current-context'] as string) || undefined, 'context');
  const cluster = pick<Record<string, unknown>>(doc.clusters, ctx.cluster, 'cluster');
  const user = pick<Record<string, unknown>>(doc.users, ctx.user, 'user');
  const fileOrData = async (fileKey: string, dataKey: string, from: Record<string, unknown>): Promise<Buffer | undefined> => {
    if (typeof from[dataKey] === 'string') return Buffer.from(from[dataKey] as string, 'base64');
    if (typeof from[fileKey] === 'string') {
      const p = from[fileKey] as string;
      return readFile(isAbsolute(p) ? p : resolve(base, p));
    }
    return undefined;
  };
  if (typeof cluster.server !== 'string') throw new DplabError(`kubeconfig ${file}: cluster has no server`);
  return {
    server: cluster.server.replace(/\/$/, ''),
    ca: await fileOrData('certificate-authority', 'certificate-authority-data', cluster),
    insecure: cluster['insecure-skip-tls-verify'] === true,
    cert: await fileOrData('client-certificate', 'client-certificate-data', user),
    key: await fileOrData('client-key', 'client-key-data', user),
    token: typeof user.token === 'string' ? user.token : undefined,
  };
}
