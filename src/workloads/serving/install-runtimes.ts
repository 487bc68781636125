// The stock ClusterServingRuntimes are objects like any other: made at start-up when missing, and
// brought up to date while they still carry Skiff's managed-by label (remove the label to keep
// your own edits of one).
import { isConflict } from '../../api/errors.js';
import { Kinds } from '../../api/index.js';
import type { StoredObject } from '../../api/meta.js';
import { deepEqual } from '../../api/meta.js';
import type { Client } from '../../store/client.js';
import { ManagedByLabel, ManagedBySkiff, stockClusterServingRuntimes } from './stock-runtimes.js';

export async function installStockRuntimes(client: Client, log: (m: string) => void): Promise<void> {
  for (const rt of stockClusterServingRuntimes()) {
    const name = rt.metadata.name as string;
    try {
      const have = await client.find<StoredObject>(Kinds.ClusterServingRuntime, { name });
      if (!have) {
        await client.create(rt);
      } else if (have.metadata.labels?.[ManagedByLabel] === ManagedBySkiff && (!deepEqual(have.spec, rt.spec) || !deepEqual(have.metadata.annotations ?? {}, rt.metadata.annotations ?? {}))) {
        await client.update({ ...have, metadata: { ...have.metadata, annotations: rt.metadata.annotations ?? {}, labels: { ...(have.metadata.labels ?? {}), ...(rt.metadata.labels ?? {}) } }, spec: rt.spec });
      }
    } catch (e) {
      if (!isConflict(e)) log(`ClusterServingRuntime ${name}: ${(e as Error).message}`);
    }
  }
}
