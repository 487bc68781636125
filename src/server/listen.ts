// Listening at an address that may be taken: the side listeners (Katib's DB manager, KFP's in-cluster
// port) try a few addresses in turn and take the first that is free.
import type { AddressInfo, Server } from 'node:net';

/** the port `server` listens on at `host`, or undefined when it cannot listen there (taken, not local) */
export function listenOn(server: Server, host: string, port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const onError = (): void => resolve(undefined);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
