// Registry ids: one counter for every namespace's registry, so an id names one entity wherever it is
// (as upstream's do in its one database). The REST API and the registry's own controllers take ids
// here alike.
import { Kinds } from '../../api/index.js';
import { isConflict } from '../../api/errors.js';
import type { StoredObject } from '../../api/meta.js';
import type { Client } from '../../store/client.js';

/**
 * Where the id counter lives: one ConfigMap, updated by compare-and-swap so that two writers (or
 * two servers on one cluster) never hand out the same id.
 */
export const idCounter = { namespace: 'kube-system', name: 'skiff-model-registry-ids' } as const;

/** the next id: the counter's value, taken by compare-and-swap */
export async function nextRegistryId(client: Client): Promise<string> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const cm = await client.find<StoredObject>(Kinds.ConfigMap, idCounter);
    if (!cm) {
      try {
        await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { ...idCounter }, data: { next: '2' } });
        return '1';
      } catch (e) {
        if (isConflict(e)) continue;
        throw e;
      }
    }
    const data = (cm as unknown as { data?: Record<string, string> }).data ?? {};
    const id = Number(data.next ?? '1');
    try {
      await client.update({ ...cm, data: { ...data, next: String(id + 1) } } as StoredObject);
      return String(id);
    } catch (e) {
      if (isConflict(e)) continue;
      throw e;
    }
  }
  throw new Error('could not take a registry id: the counter kept changing');
}
