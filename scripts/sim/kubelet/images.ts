/**
 * Which container images the stand-in can run. It has no image store and no registry: the only
 * workload it runs is agnhost, built from the same Kubernetes source as the control plane. Any
 * `registry.k8s.io/e2e-test-images/agnhost:<tag>` maps to that binary, whatever the tag (the tag
 * difference is recorded in the container status' imageID). Pure.
 */

/** kind's `image` field for agnhost, with or without the registry host and with any tag or digest. */
const AGNHOST =
  /^(?:registry\.k8s\.io\/e2e-test-images\/|k8s\.gcr\.io\/e2e-test-images\/|gcr\.io\/kubernetes-e2e-test-images\/)?agnhost(?::(\w[\w.-]{0,127}))?(?:@sha256:[a-f0-9]{64})?$/;

export type ImageResolution =
  { ok: true; binary: 'agnhost'; requestedTag: string | null } | { ok: false; reason: 'ErrImageNeverPull'; message: string };

export function resolveImage(image: string): ImageResolution {
  const m = AGNHOST.exec(image.trim());
  if (m) {
    return { ok: true, binary: 'agnhost', requestedTag: m[1] ?? null };
  }
  return {
    ok: false,
    reason: 'ErrImageNeverPull',
    message: `the sim provider runs only agnhost (registry.k8s.io/e2e-test-images/agnhost:<tag>, as the built binary); it has no image store and cannot run "${image}"`,
  };
}

/** The container status' imageID: says which binary ran in place of the requested image. */
export function imageIdFor(image: string, agnhostVersion: string): string {
  return `dplab-sim://agnhost@${agnhostVersion} (requested ${image})`;
}
