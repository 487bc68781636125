// How a long-running command (`skiff up`, `skiff node`) learns it should stop: SIGINT or SIGTERM, or
// the injected AbortSignal in tests; a second signal exits at once. With SKIFF_STOP_WITH_PARENT=1 it
// also stops, as on SIGTERM, once the process that started it is gone (a test runner that killed a
// test file at its timeout would otherwise leave that file's servers running).

export interface StopSignals {
  /** resolves on the first signal (at once when the injected one is already aborted) */
  stopped: Promise<void>;
  /** removes the process signal handlers again */
  dispose(): void;
}

export function stopSignals(signal: AbortSignal | undefined): StopSignals {
  let stopRequested: () => void = () => {};
  const stopped = new Promise<void>((r) => (stopRequested = r));
  let signals = 0;
  const onSignal = (): void => {
    signals++;
    if (signals === 1) stopRequested();
    else process.exit(130);
  };
  const useProcessSignals = !signal;
  let orphanCheck: NodeJS.Timeout | undefined;
  if (useProcessSignals) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    if (process.env.SKIFF_STOP_WITH_PARENT === '1') {
      const parent = process.ppid;
      orphanCheck = setInterval(() => {
        if (process.ppid === parent) return;
        clearInterval(orphanCheck);
        if (signals === 0) onSignal();
      }, 1000);
      orphanCheck.unref();
    }
  } else if (signal.aborted) stopRequested();
  else signal.addEventListener('abort', onSignal, { once: true });
  return {
    stopped,
    dispose: () => {
      if (!useProcessSignals) return;
      clearInterval(orphanCheck);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
