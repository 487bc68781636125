// The layer map (README "Architecture"): each layer imports only the layers below it.
//   util → api → store, artifacts → control → scheduler → substrate → workloads/* → server → cli
// Tests may reach anything they test; `src/testing/` (the shared harness) may too.
const layers = ['util', 'api', 'store', 'artifacts', 'control', 'scheduler', 'substrate', 'workloads', 'server', 'cli'];
// what each layer may not import: every layer above it (artifacts and store are side by side)
const above = {
  util: layers.slice(1),
  api: layers.slice(2),
  store: ['artifacts', ...layers.slice(4)],
  artifacts: ['store', ...layers.slice(4)],
  control: layers.slice(5),
  scheduler: layers.slice(6),
  substrate: layers.slice(7),
  workloads: layers.slice(8),
  server: layers.slice(9),
};
const notTest = '\\.test\\.ts$';
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'import cycles make layers that cannot be read or tested on their own', from: { pathNot: notTest }, to: { circular: true } },
    ...Object.entries(above).map(([layer, up]) => ({
      name: `${layer}-imports-above`,
      severity: 'error',
      comment: `src/${layer}/ may import only the layers below it`,
      from: { path: `^src/${layer}/`, pathNot: notTest },
      to: { path: `^src/(${up.join('|')})/` },
    })),
    {
      name: 'workload-imports-workload',
      severity: 'error',
      comment: 'each workload stands alone: what two share moves down a layer',
      from: { path: '^src/workloads/([^/]+)/', pathNot: notTest },
      to: { path: '^src/workloads/', pathNot: '^src/workloads/$1/|^src/workloads/[^/]+\\.ts$' },
    },
    {
      name: 'production-imports-testing',
      severity: 'error',
      comment: 'the shared test harness is for tests only',
      from: { path: '^src/', pathNot: `${notTest}|^src/testing/|/testing\\.ts$|/testing/` },
      to: { path: '^src/testing/|/testing\\.ts$' },
    },
    {
      name: 'only-substrate-starts-processes',
      severity: 'error',
      comment: 'only src/substrate/ starts processes (DESIGN.md): everything else asks the substrate',
      from: { path: '^src/', pathNot: `^src/substrate/|^src/cli/|^src/testing/|${notTest}` },
      to: { path: '^child_process$|^node:child_process$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(dist|node_modules|build)/' },
    includeOnly: '^src/|^node:child_process$|^child_process$',
  },
};
