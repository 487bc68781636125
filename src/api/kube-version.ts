// The Kubernetes version Skiff speaks as, in the forms a cluster writes it: `/version`'s gitVersion and a
// Node's kubeletVersion (`v1.35.4+skiff-0.1.0`: the Kubernetes API whose schemas Skiff serves, with
// Skiff's own release as semver build metadata, as k3s writes `v1.31.4+k3s1`), and Go's names for the
// machine's architecture.
import { schemaCatalog } from './openapi-schemas.js';

/** Go's GOARCH for Node's process.arch */
const goArchs: Record<string, string> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64', loong64: 'loong64' };

/** the architecture as Go names it (`amd64`, not Node's `x64`): what a Node and `/version` report */
export function goArch(arch: string = process.arch): string {
  return goArchs[arch] ?? arch;
}

/** `v<major>.<minor>.<patch>+skiff-<release>` of the Kubernetes API served */
export function kubeGitVersion(skiffVersion: string, kubernetesVersion = schemaCatalog().kubernetesVersion): string {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(kubernetesVersion);
  const [major, minor, patch] = m ? [m[1] ?? '1', m[2] ?? '0', m[3] ?? '0'] : ['1', '0', '0'];
  // build metadata takes [0-9A-Za-z-] in dot-separated parts: `+skiff-0.1.0`
  return `v${major}.${minor}.${patch}+skiff-${skiffVersion.replace(/[^0-9A-Za-z.-]/g, '-')}`;
}
