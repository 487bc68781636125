#!/usr/bin/env node
// Launcher for the skiff CLI: the compiled code lives in dist/ (npm run build).
const quietPipe = (stream) =>
  stream.on('error', (err) => {
    // The reader went away (`skiff logs x | head`): stop quietly.
    if (err && err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  });
quietPipe(process.stdout);
quietPipe(process.stderr);

import('../dist/src/cli/main.js').then(
  async ({ main }) => {
    process.exitCode = await main(process.argv.slice(2));
  },
  (err) => {
    const missing = err && err.code === 'ERR_MODULE_NOT_FOUND';
    process.stderr.write(
      missing
        ? "error: skiff is not built (dist/src/cli/main.js is missing); run 'npm run build'\n"
        : `error: ${err && err.message ? err.message : String(err)}\n`,
    );
    process.exitCode = 1;
  },
);
