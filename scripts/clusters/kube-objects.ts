/**
 * The fields of Kubernetes objects the runner reads, as zod schemas: every `kubectl … -o json`
 * answer and every recorded observation is checked against them, so an object of another shape
 * (a newer API, a hand-edited file) fails with the field's path instead of reading `undefined`.
 * One schema serves every kind: the fields are optional and named as the API names them (Service,
 * Pod, Deployment, DaemonSet, EndpointSlice, ConfigMap, Node, CiliumNetworkPolicy); fields nobody
 * reads pass through untouched, so recordings keep them.
 */
import { z } from 'zod';

const str = z.string().optional();
const num = z.number().optional();

const servicePort = z
  .object({
    name: str,
    port: z.number(),
    targetPort: z.union([z.number(), z.string()]).optional(),
    protocol: z.enum(['TCP', 'UDP', 'SCTP']).optional(),
    nodePort: num,
  })
  .passthrough();

const container = z
  .object({ name: str, image: str, args: z.array(z.string()).optional(), command: z.array(z.string()).optional() })
  .passthrough();

/** CiliumNetworkPolicy `spec.ingress[].toPorts[].rules.http[]`. */
const ciliumIngress = z
  .object({
    toPorts: z
      .array(
        z
          .object({
            rules: z
              .object({ http: z.array(z.object({ method: str, path: str }).passthrough()).optional() })
              .passthrough()
              .optional(),
          })
          .passthrough(),
      )
      .optional(),
  })
  .passthrough();

const kubeSpecSchema = z
  .object({
    // Service
    type: str,
    clusterIP: str,
    clusterIPs: z.array(z.string()).optional(),
    externalIPs: z.array(z.string()).optional(),
    ports: z.array(servicePort).optional(),
    externalTrafficPolicy: str,
    internalTrafficPolicy: str,
    healthCheckNodePort: num,
    sessionAffinity: str,
    sessionAffinityConfig: z
      .object({ clientIP: z.object({ timeoutSeconds: num }).passthrough().optional() })
      .passthrough()
      .optional(),
    // Pod
    nodeName: str,
    containers: z.array(container).optional(),
    // Deployment, DaemonSet
    replicas: num,
    template: z
      .object({
        spec: z
          .object({ containers: z.array(container).optional() })
          .passthrough()
          .optional(),
      })
      .passthrough()
      .optional(),
    // CiliumNetworkPolicy
    ingress: z.array(ciliumIngress).optional(),
  })
  .passthrough();

const kubeStatusSchema = z
  .object({
    // Pod
    phase: str,
    podIP: str,
    conditions: z.array(z.object({ type: str, status: str }).passthrough()).optional(),
    // Deployment, DaemonSet
    readyReplicas: num,
    numberReady: num,
    desiredNumberScheduled: num,
    // Service of type LoadBalancer
    loadBalancer: z
      .object({ ingress: z.array(z.object({ ip: str, hostname: str }).passthrough()).optional() })
      .passthrough()
      .optional(),
    // Node
    addresses: z.array(z.object({ type: z.string(), address: z.string() }).passthrough()).optional(),
  })
  .passthrough();

/** EndpointSlice `endpoints[]`; a missing `ready` condition means ready (API reference). */
const sliceEndpointSchema = z
  .object({
    addresses: z.array(z.string()).optional(),
    conditions: z
      .object({ ready: z.boolean().nullish(), serving: z.boolean().nullish(), terminating: z.boolean().nullish() })
      .passthrough()
      .optional(),
    targetRef: z.object({ kind: str, name: str }).passthrough().optional(),
  })
  .passthrough();

export const kubeObjectSchema = z
  .object({
    kind: str,
    metadata: z
      .object({ name: str, namespace: str, labels: z.record(z.string(), z.string()).optional() })
      .passthrough()
      .optional(),
    spec: kubeSpecSchema.optional(),
    status: kubeStatusSchema.optional(),
    /** ConfigMap */
    data: z.record(z.string(), z.string()).optional(),
    /** EndpointSlice */
    endpoints: z.array(sliceEndpointSchema).nullish(),
  })
  .passthrough();

export const kubeListSchema = z.object({ kind: str, items: z.array(kubeObjectSchema).optional() }).passthrough();

/** An object read from a list across namespaces (`get services -A`): name and namespace are always there. */
export const namespacedObjectSchema = kubeObjectSchema.extend({
  metadata: z.object({ name: z.string(), namespace: z.string(), labels: z.record(z.string(), z.string()).optional() }).passthrough(),
});

/** `{ items: [...] }` of the given object schema. */
export const listOf = <T extends z.ZodTypeAny>(item: T) => z.object({ items: z.array(item).optional() }).passthrough();

/** A Service's `spec.selector` (a Deployment's is a LabelSelector, so the shared spec leaves it untyped). */
export const serviceSelectorSchema = z.record(z.string(), z.string());

export type KubeObject = z.infer<typeof kubeObjectSchema>;
export type KubeList = z.infer<typeof kubeListSchema>;

/** `kubectl version -o json`: only the server's version is read. */
export const kubeVersionSchema = z.object({ serverVersion: z.object({ gitVersion: str }).passthrough().optional() }).passthrough();
