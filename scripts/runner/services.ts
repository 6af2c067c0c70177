/**
 * The runner's process-wide services, wired in one place: the CLI commands and the server share
 * them within a process. Lower layers take what they need as arguments (the cluster manager is
 * handed the labs' image list), so nothing below this file knows about the labs.
 */
import { ClusterManager } from '../clusters/manager.ts';
import { labImages } from '../labs/images.ts';

/** The runner's one cluster manager. */
export const clusterManager = new ClusterManager({ imagesFor: labImages });
