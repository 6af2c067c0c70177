/**
 * Which container images the stand-in can run. It has no image store and no registry: it runs
 * binaries built from the same Kubernetes source as the control plane, one per image it knows.
 * Any tag maps to the built binary (the tag difference is recorded in the container status'
 * imageID). Pure.
 * - `registry.k8s.io/e2e-test-images/agnhost:<tag>`: the labs' workload; entrypoint `/agnhost`,
 *   default args `pause`.
 * - `registry.k8s.io/kube-proxy:<tag>`: kubeadm's kube-proxy DaemonSet; the image has no
 *   entrypoint of its own, its pods name `/usr/local/bin/kube-proxy`.
 */

export type SimBinary = 'agnhost' | 'kube-proxy';

const TAG = String.raw`(?::(\w[\w.-]{0,127}))?(?:@sha256:[a-f0-9]{64})?$`;
const IMAGES: Record<SimBinary, RegExp> = {
  agnhost: new RegExp(
    String.raw`^(?:registry\.k8s\.io\/e2e-test-images\/|k8s\.gcr\.io\/e2e-test-images\/|gcr\.io\/kubernetes-e2e-test-images\/)?agnhost` +
      TAG,
  ),
  'kube-proxy': new RegExp(String.raw`^(?:registry\.k8s\.io\/|k8s\.gcr\.io\/)?kube-proxy` + TAG),
};

/** Paths a container's command may name for each binary (the image's own location of it). */
export const IMAGE_PATHS: Record<SimBinary, readonly string[]> = {
  agnhost: ['/agnhost', 'agnhost'],
  'kube-proxy': ['/usr/local/bin/kube-proxy', 'kube-proxy'],
};

export type ImageResolution =
  { ok: true; binary: SimBinary; requestedTag: string | null } | { ok: false; reason: 'ErrImageNeverPull'; message: string };

export function resolveImage(image: string): ImageResolution {
  for (const [binary, re] of Object.entries(IMAGES) as [SimBinary, RegExp][]) {
    const m = re.exec(image.trim());
    if (m) return { ok: true, binary, requestedTag: m[1] ?? null };
  }
  return {
    ok: false,
    reason: 'ErrImageNeverPull',
    message: `the sim provider runs only agnhost (registry.k8s.io/e2e-test-images/agnhost:<tag>) and kube-proxy (registry.k8s.io/kube-proxy:<tag>), as the built binaries; it has no image store and cannot run "${image}"`,
  };
}

/** The container status' imageID: says which binary ran in place of the requested image. */
export function imageIdFor(image: string, binary: SimBinary, version: string): string {
  return `dplab-sim://${binary}@${version} (requested ${image})`;
}
