/**
 * The sim cluster's PKI, made with openssl through the command seam: one CA, serving and client
 * certificates (EC P-256, as fast to make as they are to use), the service-account signing key
 * pair, and kubeconfigs with the certificates embedded (so they work from any folder).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../base/exec.ts';

const DAYS = '3650';
const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export interface CertPair {
  cert: string;
  key: string;
}

export async function ensureCa(pki: string, signal?: AbortSignal): Promise<CertPair> {
  mkdirSync(pki, { recursive: true });
  const pair = { cert: join(pki, 'ca.crt'), key: join(pki, 'ca.key') };
  if (existsSync(pair.cert) && existsSync(pair.key)) return pair;
  await run(
    'openssl',
    [
      'req',
      '-x509',
      ...EC,
      '-keyout',
      pair.key,
      '-out',
      pair.cert,
      '-days',
      DAYS,
      '-subj',
      '/CN=kubernetes',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
    ],
    { signal },
  );
  return pair;
}

export interface LeafSpec {
  /** File name stem under the pki folder. */
  name: string;
  cn: string;
  /** Organisations (Kubernetes groups for client certificates). */
  orgs?: readonly string[];
  /** DNS names and IPs for serving certificates. */
  dns?: readonly string[];
  ips?: readonly string[];
}

/** A certificate signed by the CA, usable as server and client. Reused when it exists. */
export async function ensureLeaf(pki: string, ca: CertPair, spec: LeafSpec, signal?: AbortSignal): Promise<CertPair> {
  const pair = { cert: join(pki, `${spec.name}.crt`), key: join(pki, `${spec.name}.key`) };
  if (existsSync(pair.cert) && existsSync(pair.key)) return pair;
  const csr = join(pki, `${spec.name}.csr`);
  const ext = join(pki, `${spec.name}.ext`);
  const subj = `${(spec.orgs ?? []).map((o) => `/O=${o}`).join('')}/CN=${spec.cn}`;
  const sans = [...(spec.dns ?? []).map((d) => `DNS:${d}`), ...(spec.ips ?? []).map((i) => `IP:${i}`)];
  writeFileSync(
    ext,
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth,clientAuth',
      ...(sans.length ? [`subjectAltName=${sans.join(',')}`] : []),
    ].join('\n') + '\n',
  );
  await run('openssl', ['req', '-new', ...EC, '-keyout', pair.key, '-out', csr, '-subj', subj], { signal });
  await run(
    'openssl',
    ['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-out', pair.cert, '-days', DAYS, '-extfile', ext],
    { signal },
  );
  return pair;
}

/** The service-account token signing key (RSA, as kubeadm makes it) and its public half. */
export async function ensureServiceAccountKeys(pki: string, signal?: AbortSignal): Promise<{ key: string; pub: string }> {
  const keys = { key: join(pki, 'sa.key'), pub: join(pki, 'sa.pub') };
  if (existsSync(keys.key) && existsSync(keys.pub)) return keys;
  await run('openssl', ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', keys.key], { signal });
  await run('openssl', ['pkey', '-in', keys.key, '-pubout', '-out', keys.pub], { signal });
  return keys;
}

const b64 = (file: string) => readFileSync(file).toString('base64');

/** A kubeconfig for one client certificate; `contextName` like kind's `kind-dplab-iptables`. */
export function writeKubeconfig(
  file: string,
  o: { server: string; ca: string; client: CertPair; clusterName: string; contextName: string; user: string },
): string {
  const text = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${o.clusterName}`,
    '  cluster:',
    `    server: ${o.server}`,
    `    certificate-authority-data: ${b64(o.ca)}`,
    'users:',
    `- name: ${o.user}`,
    '  user:',
    `    client-certificate-data: ${b64(o.client.cert)}`,
    `    client-key-data: ${b64(o.client.key)}`,
    'contexts:',
    `- name: ${o.contextName}`,
    '  context:',
    `    cluster: ${o.clusterName}`,
    `    user: ${o.user}`,
    `current-context: ${o.contextName}`,
    '',
  ].join('\n');
  writeFileSync(file, text, { mode: 0o600 });
  return file;
}
