/**
 * The pod status the stand-in reports, from what it knows about each container. Pure; shaped as
 * the kubelet's (conditions, IPs, container states), so kubectl and the endpoints controller read
 * it as they would a kind node's.
 */

export type ContainerState =
  | { kind: 'waiting'; reason: string; message?: string }
  | { kind: 'running'; startedAt: string }
  | { kind: 'terminated'; exitCode: number; signal?: number; reason: string; startedAt: string; finishedAt: string; message?: string };

export interface ContainerView {
  name: string;
  image: string;
  imageID: string;
  containerID: string;
  state: ContainerState;
  lastState: ContainerState | null;
  restartCount: number;
  ready: boolean;
  started: boolean;
}

export interface PodView {
  hostIP: string;
  podIP: string | null;
  startTime: string;
  sandboxReady: boolean;
  /** All containers ended and none will restart (restartPolicy Never/OnFailure). */
  finished: boolean;
  containers: ContainerView[];
  /** When the pod's Ready / ContainersReady conditions last changed. */
  readySince: string;
  scheduledAt: string;
}

function stateJson(s: ContainerState) {
  switch (s.kind) {
    case 'waiting':
      return { waiting: { reason: s.reason, ...(s.message ? { message: s.message } : {}) } };
    case 'running':
      return { running: { startedAt: s.startedAt } };
    case 'terminated':
      return {
        terminated: {
          exitCode: s.exitCode,
          ...(s.signal ? { signal: s.signal } : {}),
          reason: s.reason,
          startedAt: s.startedAt,
          finishedAt: s.finishedAt,
          ...(s.message ? { message: s.message } : {}),
        },
      };
  }
}

export function podPhase(view: PodView): 'Pending' | 'Running' | 'Succeeded' | 'Failed' {
  const states = view.containers.map((c) => c.state);
  if (!view.sandboxReady || states.length === 0) return 'Pending';
  if (view.finished) return states.every((s) => s.kind === 'terminated' && s.exitCode === 0) ? 'Succeeded' : 'Failed';
  if (states.some((s) => s.kind === 'running') || view.containers.some((c) => c.restartCount > 0)) return 'Running';
  return 'Pending';
}

export function podStatus(view: PodView) {
  const allReady = view.containers.length > 0 && view.containers.every((c) => c.ready);
  const phase = podPhase(view);
  const cond = (type: string, ok: boolean, since: string, reason?: string) => ({
    type,
    status: ok ? 'True' : 'False',
    lastProbeTime: null,
    lastTransitionTime: since,
    ...(ok || !reason ? {} : { reason }),
  });
  const notReady = view.containers.filter((c) => !c.ready).map((c) => c.name);
  return {
    phase,
    conditions: [
      cond('PodReadyToStartContainers', view.sandboxReady, view.startTime),
      cond('Initialized', true, view.startTime),
      {
        ...cond('Ready', allReady, view.readySince, phase === 'Succeeded' ? 'PodCompleted' : 'ContainersNotReady'),
        ...(allReady ? {} : { message: `containers with unready status: [${notReady.join(' ')}]` }),
      },
      {
        ...cond('ContainersReady', allReady, view.readySince, phase === 'Succeeded' ? 'PodCompleted' : 'ContainersNotReady'),
        ...(allReady ? {} : { message: `containers with unready status: [${notReady.join(' ')}]` }),
      },
      cond('PodScheduled', true, view.scheduledAt),
    ],
    hostIP: view.hostIP,
    hostIPs: [{ ip: view.hostIP }],
    ...(view.podIP ? { podIP: view.podIP, podIPs: [{ ip: view.podIP }] } : {}),
    startTime: view.startTime,
    containerStatuses: view.containers.map((c) => ({
      name: c.name,
      image: c.image,
      imageID: c.imageID,
      ...(c.containerID ? { containerID: c.containerID } : {}),
      ready: c.ready,
      started: c.started,
      restartCount: c.restartCount,
      state: stateJson(c.state),
      lastState: c.lastState ? stateJson(c.lastState) : {},
    })),
  };
}

/** The kubelet's crash-loop back-off, shortened (1 s doubling to 30 s) so labs do not wait minutes. */
export function restartDelayMs(restartCount: number): number {
  return Math.min(30_000, 1_000 * 2 ** Math.max(0, restartCount - 1));
}

export function shouldRestart(policy: string | undefined, exitCode: number): boolean {
  if (policy === 'Never') return false;
  if (policy === 'OnFailure') return exitCode !== 0;
  return true;
}
