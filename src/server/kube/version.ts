// `GET /version`, as kube-apiserver answers it: apimachinery's version.Info, every field present. The
// Python client's VersionApi().get_code() refuses an answer without buildDate, compiler, goVersion, …;
// client-go's ServerVersion() and kubectl's skew check read major, minor and gitVersion. The version
// is the Kubernetes API Skiff serves (the one its OpenAPI schemas come from), with Skiff's own release
// as semver build metadata, as k3s writes `v1.31.4+k3s1`.
import { goArch, kubeGitVersion } from '../../api/kube-version.js';
import { schemaCatalog } from '../../api/openapi-schemas.js';

export interface VersionInfo {
  major: string;
  minor: string;
  emulationMajor: string;
  emulationMinor: string;
  minCompatibilityMajor: string;
  minCompatibilityMinor: string;
  gitVersion: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  goVersion: string;
  compiler: string;
  platform: string;
  /** Skiff's release */
  skiff: string;
  nodeVersion: string;
}

export function versionInfo(skiffVersion: string, kubernetesVersion = schemaCatalog().kubernetesVersion): VersionInfo {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(kubernetesVersion);
  const [major, minor] = m ? [m[1] ?? '1', m[2] ?? '0'] : ['1', '0'];
  return {
    major,
    minor,
    emulationMajor: major,
    emulationMinor: minor,
    // kube-apiserver N can stand in for N-1 (its compatibility version)
    minCompatibilityMajor: major,
    minCompatibilityMinor: String(Math.max(0, Number(minor) - 1)),
    gitVersion: kubeGitVersion(skiffVersion, kubernetesVersion),
    // not a Go build: the fields a Go build stamps are present, and empty where nothing stands for them
    gitCommit: '',
    gitTreeState: '',
    buildDate: '1970-01-01T00:00:00Z',
    goVersion: '',
    compiler: '',
    platform: `${process.platform}/${goArch()}`,
    skiff: skiffVersion,
    nodeVersion: process.version,
  };
}
