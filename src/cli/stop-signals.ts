// How a long-running command (`skiff up`, `skiff node`) learns it should stop: SIGINT or SIGTERM, or
// the injected AbortSignal in tests; a second signal exits at once.

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
  if (useProcessSignals) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  } else if (signal.aborted) stopRequested();
  else signal.addEventListener('abort', onSignal, { once: true });
  return {
    stopped,
    dispose: () => {
      if (!useProcessSignals) return;
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
