/**
 * A scripted cluster for first-service on the test doubles: kubectl answers with the lab's own
 * solved/unsolved observations, and each step's solution command flips a state flag, so the
 * harness, the CLI and the API can be driven end to end without Docker.
 */
import { readFileSync } from 'node:fs';
import type { Rule, Scenario } from '../../../test/fixtures/doubles.ts';
import type { Mode } from '../../clusters/modes.ts';
import { findObservationFile } from '../observations.ts';

const NS = 'lab-first-service';
const EMPTY = JSON.stringify({ apiVersion: 'v1', items: [], kind: 'List', metadata: { resourceVersion: '' } });

function solved(step: string, mode: Mode): any {
  return JSON.parse(readFileSync(findObservationFile('first-service', step, 'solved', mode)!, 'utf8')).observations;
}

/** What `kubectl get pods --field-selector metadata.name=client` prints once the client runs. */
function clientPodList(webPods: any): string {
  const pod = structuredClone(webPods.items[0]);
  pod.metadata.name = 'client';
  pod.metadata.labels = { app: 'client' };
  pod.spec.containers = [{ name: 'client', image: 'registry.k8s.io/e2e-test-images/agnhost:2.53', args: ['pause'] }];
  return JSON.stringify({ ...webPods, items: [pod] });
}

export interface ScenarioOptions {
  /** Flags already set (e.g. `{ s1: '1' }` makes step 1 look done before its solution). */
  breakSolution?: 'deploy-web';
}

export function firstServiceScenario(mode: Mode = 'iptables', opts: ScenarioOptions = {}): Scenario {
  const deploy = solved('deploy-web', mode);
  const expose = solved('expose-web', mode);
  const reach = solved('reach-web', mode);
  const proxy = solved('proxy-mode', mode);
  const k = (match: string, rest: Omit<Rule, 'tool' | 'match'> = {}): Rule => ({ tool: 'kubectl', match, ...rest });
  return {
    rules: [
      // setup
      k(`delete namespace ${NS}`, { stdout: `namespace "${NS}" deleted\n`, set: { s1: '0', s2: '0', s3: '0', s4: '0', setup: '0' } }),
      k(`create namespace ${NS}`, { stdout: `namespace/${NS} created\n` }),
      k(`label namespace ${NS} dplab\\.io/setup=first-service`, { stdout: `namespace/${NS} labeled\n`, set: { setup: '1' } }),
      k(`label namespace ${NS}`, { stdout: `namespace/${NS} labeled\n` }),
      k(`get namespace ${NS} --ignore-not-found -o json`, { when: { setup: '1' }, stdout: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { 'dplab.io/lab': 'first-service', 'dplab.io/setup': 'first-service' } } }) }),
      k(`get namespace ${NS} --ignore-not-found -o json`, { stdout: '' }),
      k('^--kubeconfig \\S+ version -o json', { stdout: JSON.stringify({ clientVersion: { gitVersion: 'v1.33.1' }, serverVersion: { gitVersion: 'v1.33.1' } }) }),
      // step 1
      k('get deployments .*metadata\\.name=web', { when: { s1: '1' }, stdout: JSON.stringify(deploy.deployments) }),
      k('get deployments', { stdout: EMPTY }),
      k('apply -f first-service/web-deployment\\.yaml', opts.breakSolution === 'deploy-web' ? { stdout: 'deployment.apps/web created\n' } : { stdout: 'deployment.apps/web created\n', set: { s1: '1' } }),
      k('rollout status deployment/web', { stdout: 'deployment "web" successfully rolled out\n' }),
      // step 2
      k('get services .*metadata\\.name=web', { when: { s2: '1' }, stdout: JSON.stringify(expose.service.services) }),
      k('get services', { stdout: EMPTY }),
      k('get endpointslices', { when: { s2: '1' }, stdout: JSON.stringify(expose.endpoints.slices) }),
      k('get endpointslices', { stdout: EMPTY }),
      k('apply -f first-service/web-service\\.yaml', { stdout: 'service/web created\n', set: { s2: '1' } }),
      // step 3
      k('get pods .*metadata\\.name=client', { when: { s3: '1' }, stdout: clientPodList(reach.web) }),
      k('get pods .*metadata\\.name=client', { stdout: EMPTY }),
      k('get pods .*-l app=web', { stdout: JSON.stringify(reach.web) }),
      k(`exec -n ${NS} client -- sh -c`, { stdout: reach.client.result.stdout }),
      k('apply -f first-service/client\\.yaml', { stdout: 'pod/client created\n', set: { s3: '1' } }),
      k('wait --for=condition=Ready pod/client', { stdout: 'pod/client condition met\n' }),
      k('exec client -- curl', { stdout: 'web-7c5ddbdf54-8xq2v' }),
      // step 4
      k('get configmaps .*metadata\\.name=proxy-mode', { when: { s4: '1' }, stdout: JSON.stringify(proxy.answer.configmaps) }),
      k('get configmaps', { stdout: EMPTY }),
      k('get daemonsets', { stdout: EMPTY }),
      k('delete configmap proxy-mode --ignore-not-found', { stdout: '', set: { s4: '0' } }),
      k(`create configmap proxy-mode --from-literal=mode=${mode === 'cilium' ? 'True' : mode}$`, { stdout: 'configmap/proxy-mode created\n', set: { s4: '1' } }),
      { tool: 'kind', match: `get nodes --name dplab-${mode}`, stdout: `dplab-${mode}-control-plane\ndplab-${mode}-worker\ndplab-${mode}-worker2\n` },
      { tool: 'kind', match: '^version', stdout: 'kind v0.29.0 go1.24.2 linux/amd64\n' },
      { tool: 'docker', match: `exec dplab-${mode}-control-plane curl .*10249/proxyMode`, stdout: mode },
    ],
  };
}
