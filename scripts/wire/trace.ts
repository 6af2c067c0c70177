/**
 * A traced request (`dplab trace`, POST /api/dataplane/:mode/trace): every rule or chain policy the
 * kernel reported the packet meeting, in order, the rewrite it saw, and which Service frontend and
 * backend those rules are in the dataplane model. The explorer's drawing reads this shape.
 */
import { z } from './zod.ts';
import { modeSchema } from './mode-schema.ts';

/**
 * How the trace was read: `xtables-monitor --trace` (iptables-nft), `nft monitor trace`, or the
 * Cilium agent's `cilium-dbg monitor` (its datapath's trace, socket and drop events).
 */
const TRACE_METHODS = ['xtables-monitor', 'nft-monitor', 'cilium-monitor'] as const;
export type TraceMethodId = (typeof TRACE_METHODS)[number];

const traceStepSchema = z.object({
  /** The table (`nat`, `filter`, `raw`; nftables: `kube-proxy`, the trace's own table; `cilium` for its events). */
  table: z.string(),
  /** The chain; for a Cilium event, where it was seen (`to-endpoint`, `to-overlay`, `from-endpoint`, `sock pre-xlate-fwd`, `drop`). */
  chain: z.string(),
  /**
   * `rule`: a rule matched; `policy`: the packet left a base chain by its policy; `return`: fell off
   * a regular chain; `event`: Cilium's datapath reported the packet (or the socket) there.
   */
  kind: z.enum(['rule', 'policy', 'return', 'event']),
  /** The rule as the tool prints it (iptables: `-A CHAIN …`; nft: the statement; Cilium: the packet as seen), null for policy/return. */
  rule: z.nullable(z.string()),
  /** The rule's handle (hex under iptables-nft, decimal under nft; Cilium: the endpoint id), null when not printed. */
  handle: z.nullable(z.string()),
  /** What the rule did, lower case: `continue`, `jump`, `goto`, `accept`, `drop`, `return`; Cilium: `forward`, `translate`, `drop`. */
  verdict: z.string(),
  /** The chain a jump or goto went to. */
  target: z.nullable(z.string()),
});
export type TraceStep = z.infer<typeof traceStepSchema>;

const tracedAddressSchema = z.object({ ip: z.string(), port: z.number() });

/** One new connection's first packet (the one the nat table sees), as the kernel reported it. */
const packetTraceSchema = z.object({
  /** The kernel's trace id (not unique over time: a flow key tells packets apart). */
  id: z.string(),
  protocol: z.string(),
  from: tracedAddressSchema,
  /** Where the packet was addressed when first seen (the Service address). */
  to: tracedAddressSchema,
  /** Where it was addressed when last seen, when a DNAT changed it (the endpoint). */
  rewrittenTo: z.nullable(tracedAddressSchema),
  steps: z.array(traceStepSchema),
  /**
   * Cilium only: where the backend was chosen. `connect`: the socket load balancer rewrote the
   * address at connect(), so the first packet already carried the backend's; `packet`: the
   * packet left addressed to the Service and the datapath translated it.
   */
  rewriteAt: z.optional(z.enum(['connect', 'packet'])),
  /** The last verdict that ended the packet's walk: `accept`, `drop`, or `reject` (a REJECT rule). */
  verdict: z.string(),
});
export type PacketTrace = z.infer<typeof packetTraceSchema>;

/** What the dataplane model says about a traced packet: which frontend and backend its rules belong to. */
const tracedRequestSchema = z.object({
  packet: packetTraceSchema,
  /** `ns/name[:port]` of the frontend whose chain the packet entered, null when none. */
  service: z.nullable(z.string()),
  frontend: z.nullable(z.object({ type: z.string(), ip: z.string(), port: z.number(), protocol: z.string() })),
  /** The chains of the frontend's path the packet walked, in order (KUBE-SERVICES → KUBE-SVC-… → KUBE-SEP-…). */
  path: z.array(z.string()),
  /** The backend the DNAT chose, with the share the rules give it. */
  backend: z.nullable(z.object({ ip: z.string(), port: z.number(), via: z.nullable(z.string()), share: z.number() })),
  /** `dnat`: sent on to `backend`; `reject` / `drop`: the rule that refused is the last step; `untranslated`: no Service rule matched. */
  outcome: z.enum(['dnat', 'reject', 'drop', 'untranslated']),
});
export type TracedRequest = z.infer<typeof tracedRequestSchema>;

/** Where N requests went, beside the share the rules give each backend. */
const traceTallySchema = z.array(
  z.object({ ip: z.string(), port: z.number(), share: z.number(), count: z.number(), via: z.nullable(z.string()) }),
);
export type TraceTally = z.infer<typeof traceTallySchema>;

export const traceResultSchema = z.object({
  mode: z.optional(modeSchema),
  node: z.string(),
  method: z.enum(TRACE_METHODS),
  /** The flow as asked for: protocol, Service (or node) address and port, optional client address. */
  flow: z.object({ protocol: z.string(), ip: z.string(), port: z.number(), client: z.nullable(z.string()) }),
  requests: z.array(tracedRequestSchema),
  tally: traceTallySchema,
  /** Requests sent; fewer traced means some were not seen in the window (said in `notes`). */
  sent: z.number(),
  notes: z.array(z.string()),
});
export type TraceResult = z.infer<typeof traceResultSchema>;

/** POST /api/dataplane/:mode/trace: what to trace. */
export const traceRequestSchema = z.object({
  /** `namespace/name` of the Service. */
  service: z.string().check(z.maxLength(253)),
  /** Which of its ports (number); default its first. */
  port: z.optional(z.number()),
  /** Trace the Service's NodePort on the node's own address instead of its ClusterIP. */
  nodePort: z.optional(z.boolean()),
  /** `namespace/name` of the client pod; absent: the request comes from the node itself. */
  from: z.optional(z.string().check(z.maxLength(253))),
  /** The node to trace on; default the client pod's node, else the first worker. */
  node: z.optional(z.string().check(z.maxLength(253))),
  /** How many requests to send (1–20). */
  count: z.optional(z.number().check(z.int(), z.minimum(1), z.maximum(20))),
});
export type TraceRequest = z.infer<typeof traceRequestSchema>;
