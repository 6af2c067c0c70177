/**
 * The runner's event streams (Server-Sent Events): how often the runner speaks on an idle stream,
 * and so how long a page may hear nothing before it takes the connection for dead (a laptop that
 * slept, a network that changed) and opens a new one.
 */
export const SSE_HEARTBEAT_MS = 15_000;
/** Three heartbeats missed. */
export const SSE_STALL_MS = 3 * SSE_HEARTBEAT_MS;
