/**
 * What a seat pod's status means for the seat, in words an instructor or operator can act on.
 * Pure: the backend adds the runner's own answer (/api/health) before it calls a seat ready.
 */
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';

export type PodVerdict = { phase: 'pending' | 'failed' | 'deleted'; message: string } | { phase: 'pod-ready' };

/** Waiting reasons that do not clear by waiting: the operator must change something. */
const STUCK: Record<string, (image: string, detail: string) => string> = {
  ErrImagePull: (img, d) =>
    `The node cannot pull the image ${img}${d}. Check the image name and the registry's credentials (imagePullSecrets).`,
  ImagePullBackOff: (img, d) =>
    `The node cannot pull the image ${img}${d}. Check the image name and the registry's credentials (imagePullSecrets).`,
  InvalidImageName: (img, d) => `The image name ${img} is not valid${d}.`,
  CrashLoopBackOff: (img, d) => `The container of ${img} keeps exiting${d}. Read its log: kubectl logs <pod> -c <container> --previous.`,
  CreateContainerError: (img, d) => `The container of ${img} cannot be created${d}.`,
  RunContainerError: (img, d) => `The container of ${img} cannot start${d}.`,
};

const detail = (message: string | undefined) => (message ? ` (${message.trim().slice(0, 300)})` : '');

function stuckContainer(statuses: V1ContainerStatus[] | undefined): string | null {
  for (const c of statuses ?? []) {
    const reason = c.state?.waiting?.reason;
    const say = reason ? STUCK[reason] : undefined;
    if (say) return `Container ${c.name}: ${say(c.image, detail(c.state?.waiting?.message))}`;
  }
  return null;
}

export function podVerdict(pod: V1Pod): PodVerdict {
  if (pod.metadata?.deletionTimestamp) return { phase: 'deleted', message: 'The seat is being deleted (its pod is terminating).' };
  const status = pod.status ?? {};
  if (status.phase === 'Failed' || status.phase === 'Succeeded') {
    const why = [status.reason, status.message].filter(Boolean).join(': ');
    return {
      phase: 'failed',
      message: `The seat's pod has stopped (${status.phase}${why ? `: ${why}` : ''}). Delete the seat and make it again.`,
    };
  }
  const stuck = stuckContainer([...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])]);
  if (stuck) return { phase: 'failed', message: stuck };
  const cond = (type: string) => status.conditions?.find((c) => c.type === type);
  const scheduled = cond('PodScheduled');
  if (scheduled?.status === 'False') {
    return {
      phase: 'pending',
      message: `Waiting for a node with room for the seat${scheduled.message ? `: ${scheduled.message.trim().replace(/\.+$/, '')}` : ''}.`,
    };
  }
  if (!pod.spec?.nodeName && !scheduled) return { phase: 'pending', message: 'Waiting for the scheduler to place the seat on a node.' };
  if (cond('Ready')?.status === 'True') return { phase: 'pod-ready' };
  const waiting = (status.containerStatuses ?? [])
    .filter((c) => !c.ready)
    .map((c) => `${c.name}${c.state?.waiting?.reason ? ` (${c.state.waiting.reason})` : ''}`);
  return {
    phase: 'pending',
    message: waiting.length
      ? `Starting the seat: waiting for ${waiting.join(', ')}.`
      : 'Starting the seat: pulling images and starting the runner and Docker-in-Docker.',
  };
}
