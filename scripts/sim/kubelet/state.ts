/**
 * What the stand-in keeps on disk per node, so that the exec server (a separate process) can find
 * a pod's namespaces and log files, and so that a stand-in restarted after a crash can remove
 * what the previous one left behind. One JSON record per pod, written atomically.
 */
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

const containerRecordSchema = z.object({
  name: z.string(),
  /** Process id of the running container (the agnhost process), or null while it is not running. */
  pid: z.number().int().nullable(),
  /** The file its stdout and stderr go to (`kubectl logs`). */
  logFile: z.string(),
  /** The container's environment, so `kubectl exec` sees what the container sees. */
  env: z.record(z.string(), z.string()),
  restartCount: z.number().int(),
});

const podRecordSchema = z.object({
  namespace: z.string(),
  name: z.string(),
  uid: z.string(),
  /** The pod's network namespace (`ip netns exec <netns>`). */
  netns: z.string(),
  /** Bind-mounted UTS namespace file (hostname = pod name), entered with `nsenter --uts=`. */
  utsFile: z.string(),
  /** Node-side veth ('' for a hostNetwork pod). */
  hostVeth: z.string(),
  /** A hostNetwork pod: netns is the node's own, so clean-up stops its processes by pid instead. */
  hostNetwork: z.boolean().optional(),
  ip: z.string(),
  containers: z.array(containerRecordSchema),
});

export type PodRecord = z.infer<typeof podRecordSchema>;

export interface StatePaths {
  root: string;
  pods: string;
  uts: string;
  logs: string;
}

export function statePaths(stateDir: string): StatePaths {
  return { root: stateDir, pods: join(stateDir, 'pods'), uts: join(stateDir, 'uts'), logs: join(stateDir, 'logs') };
}

export async function writePodRecord(paths: StatePaths, record: PodRecord): Promise<void> {
  await mkdir(paths.pods, { recursive: true });
  const file = join(paths.pods, `${record.uid}.json`);
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(record, null, 2));
  await rename(tmp, file);
}

export async function removePodRecord(paths: StatePaths, uid: string): Promise<void> {
  await rm(join(paths.pods, `${uid}.json`), { force: true });
}

/** Every readable record; unreadable ones are returned by file name so cleanup can still remove them. */
export async function readPodRecords(paths: StatePaths): Promise<{ records: PodRecord[]; broken: string[] }> {
  let names: string[];
  try {
    names = await readdir(paths.pods);
  } catch {
    return { records: [], broken: [] };
  }
  const records: PodRecord[] = [];
  const broken: string[] = [];
  for (const n of names.filter((f) => f.endsWith('.json'))) {
    try {
      records.push(podRecordSchema.parse(JSON.parse(await readFile(join(paths.pods, n), 'utf8'))));
    } catch {
      broken.push(join(paths.pods, n));
    }
  }
  return { records, broken };
}
