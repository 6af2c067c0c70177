/**
 * Every object the Kubernetes seat backend creates and every shipped manifest
 * (scripts/portal/manifests/), checked against the Kubernetes OpenAPI schemas that the
 * `kubernetes-models` package compiles (types, required fields, enums, formats such as
 * quantities), offline. kubernetes-models 4.5 carries the schemas of Kubernetes 1.33 (its Pod
 * has 1.33's `stopSignal`, not 1.34's `hostnameOverride`); 5.x, which tracks newer releases,
 * needs Node 22. The pinned release (1.35) checks the same objects in the sim tier
 * (test/sim/kubernetes-seats.test.ts): its real API server, with fieldValidation=Strict, also
 * rejects unknown fields, which these schemas allow.
 */
import { Deployment } from 'kubernetes-models/apps/v1';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1';
import { Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { Namespace, Pod, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { shippedManifests, type ManifestObject } from '../../test/fixtures/portal-manifests.ts';
import { ownedByPod, seatPod, seatSecret, seatService, type KubernetesSeatConfig } from './seat-objects.ts';
import { seatSizing } from './seat-sizing.ts';

const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/ServiceAccount': ServiceAccount,
  'v1/Pod': Pod,
  'v1/Service': Service,
  'v1/Secret': Secret,
  'apps/v1/Deployment': Deployment,
  'rbac.authorization.k8s.io/v1/Role': Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
  'networking.k8s.io/v1/Ingress': Ingress,
};

type Obj = ManifestObject;

function validate(obj: Obj): void {
  const Model = MODELS[`${obj.apiVersion}/${obj.kind}`];
  if (!Model) throw new Error(`no schema for ${obj.apiVersion} ${obj.kind}`);
  new Model(obj).validate();
}

const config: KubernetesSeatConfig = {
  namespace: 'dplab-workshop',
  runnerImage: 'registry.example.com/dataplane-lab/runner:0.1.0',
  sizing: seatSizing(2),
  nodeSelector: { 'dplab.io/seats': 'true' },
  tolerations: [{ key: 'dplab.io/seats', operator: 'Exists', effect: 'NoSchedule' }],
  imagePullSecrets: ['registry-creds'],
};
const spec = { id: 'a1', runnerToken: 'x'.repeat(32), warm: ['iptables' as const] };

describe('seat objects against the Kubernetes schemas (kubernetes-models, Kubernetes 1.33)', () => {
  const owner = ownedByPod({ name: 'dplab-seat-a1', uid: '6f1c3a52-4a8e-4c55-9d43-2f2c9a0f6a11' });
  const objects = { pod: seatPod(spec, config), secret: seatSecret(spec, config, owner), service: seatService(spec, config, owner) };

  for (const [name, obj] of Object.entries(objects)) {
    it(`the seat ${name} is valid`, () => {
      expect(() => validate(obj as Obj)).not.toThrow();
    });
  }

  it('the validator does look: a wrong type, a bad quantity and a missing required field are each refused', () => {
    const wrongType = structuredClone(objects.pod) as Obj;
    wrongType.spec.containers[0].ports[0].containerPort = '4321';
    expect(() => validate(wrongType)).toThrow(/containerPort/);
    const badQuantity = structuredClone(objects.pod) as Obj;
    badQuantity.spec.containers[1].resources.limits.memory = 'three gigs';
    expect(() => validate(badQuantity)).toThrow(/memory/);
    const noPorts = structuredClone(objects.service) as Obj;
    delete noPorts.spec.ports[0].port;
    expect(() => validate(noPorts)).toThrow(/port/);
  });

  it('the Service selects exactly the seat pod, by the port the runner listens on', () => {
    const podLabels = objects.pod.metadata!.labels!;
    for (const [k, v] of Object.entries(objects.service.spec!.selector!)) expect(podLabels[k]).toBe(v);
    const runner = objects.pod.spec!.containers.find((c) => c.name === 'runner')!;
    expect(runner.ports![0]).toMatchObject({ name: objects.service.spec!.ports![0].targetPort, containerPort: 4321 });
  });
});

describe('shipped manifests (scripts/portal/manifests/) against the Kubernetes schemas', () => {
  const all = shippedManifests();

  it('ship every object the operator needs, each valid', () => {
    expect(all.map(({ obj }) => obj.kind).sort()).toEqual([
      'Deployment',
      'Ingress',
      'Namespace',
      'Role',
      'RoleBinding',
      'Service',
      'ServiceAccount',
    ]);
    for (const { file, obj } of all) expect(() => validate(obj), `${file}: ${obj.kind}`).not.toThrow();
  });

  const byKind = (kind: string) => all.find(({ obj }) => obj.kind === kind)!.obj;

  it('agree with each other: one namespace, the Role bound to the Deployment’s ServiceAccount, Service and Ingress reaching the pod', () => {
    const ns = byKind('Namespace').metadata.name;
    for (const { obj } of all.filter(({ obj }) => obj.kind !== 'Namespace')) expect(obj.metadata.namespace, obj.kind).toBe(ns);
    const sa = byKind('ServiceAccount').metadata.name;
    const binding = byKind('RoleBinding');
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: byKind('Role').metadata.name });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: sa, namespace: ns }]);
    const deploy = byKind('Deployment');
    expect(deploy.spec.template.spec.serviceAccountName).toBe(sa);
    const svc = byKind('Service');
    for (const [k, v] of Object.entries(svc.spec.selector)) expect(deploy.spec.template.metadata.labels[k]).toBe(v);
    const portName = svc.spec.ports[0].targetPort;
    expect(deploy.spec.template.spec.containers[0].ports.map((p: { name: string }) => p.name)).toContain(portName);
    const backend = byKind('Ingress').spec.rules[0].http.paths[0].backend.service;
    expect(backend).toEqual({ name: svc.metadata.name, port: { name: svc.spec.ports[0].name } });
    expect(byKind('Ingress').spec.tls[0].hosts).toEqual([byKind('Ingress').spec.rules[0].host]);
    expect(deploy.spec.template.spec.containers[0].args).toContain('--behind-tls');
    // Seat pods are privileged (dind): Pod Security must allow it in this namespace.
    expect(byKind('Namespace').metadata.labels!['pod-security.kubernetes.io/enforce']).toBe('privileged');
  });

  it('grant the portal only pods, pods/status, services and secrets in its namespace, and nothing cluster-wide', () => {
    const role = byKind('Role');
    const grants = role.rules.flatMap((r: { apiGroups: string[]; resources: string[]; verbs: string[] }) =>
      r.resources.flatMap((res) => r.verbs.map((v) => `${r.apiGroups.join('')}/${res}:${v}`)),
    );
    expect(grants.sort()).toEqual(
      [
        '/pods:create',
        '/pods:get',
        '/pods:list',
        '/pods:delete',
        '/pods/status:get',
        '/services:create',
        '/services:get',
        '/services:delete',
        '/secrets:create',
        '/secrets:get',
        '/secrets:delete',
      ].sort(),
    );
    expect(all.some(({ obj }) => obj.kind.startsWith('Cluster'))).toBe(false);
  });
});
