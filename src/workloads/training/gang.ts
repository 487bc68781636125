// Gang admission: the Pods of a gang are created together only when all of them fit the node's free
// room at once, so a training job never holds half the machine while its peers wait. Free room is the
// node's allocatable resources minus the requests of the Pods placed there and not finished, and of
// the training Pods created but not bound yet (admitted earlier, about to be placed). Admissions are
// serialised (one at a time, across every training kind), and the Pods an admission decides on are
// created before the next admission looks, so two gangs are never both admitted on room for one.
import type { Pod } from '../../api/core-types.js';
import { Kinds } from '../../api/index.js';
import type { Client } from '../../store/client.js';
import type { NodeView } from '../../scheduler/placement.js';
import { ResourceFit, nodeView, withAssignment } from '../../scheduler/placement.js';
import type { Placement } from '../../scheduler/placement.js';
import type { ResourceList } from '../../scheduler/resources.js';
import { GPU } from '../../scheduler/resources.js';
import { parseQuantity } from '../../api/quantity.js';
import { TrainingLabels } from './types.js';

export interface GangAdmissionOptions {
  client: Client;
  /** the node gangs are admitted against; default: the only Node (or the first) */
  nodeName?: string;
  /** stands in for a Node object's allocatable resources */
  nodeCapacity?: Record<string, string | number>;
  placement?: Placement;
}

export type GangVerdict = { fits: true } | { fits: false; reason: string; never: boolean };

const terminal = (p: Pod): boolean => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

export class GangAdmission {
  private chain: Promise<unknown> = Promise.resolve();
  private readonly placement: Placement;

  constructor(private readonly opts: GangAdmissionOptions) {
    this.placement = opts.placement ?? new ResourceFit();
  }

  /** runs `fn` with no other admission in between: check, then create, then the next may look */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** the node to admit against, or undefined when there is none to check (nothing is refused then) */
  async node(): Promise<NodeView | undefined> {
    const cap = this.opts.nodeCapacity;
    if (cap) {
      const allocatable: ResourceList = {};
      for (const [k, v] of Object.entries(cap)) allocatable[k] = typeof v === 'number' ? v : (parseQuantity(v) ?? 0);
      const gpus = Array.from({ length: Math.floor(allocatable[GPU] ?? 0) }, (_, i) => i);
      return { name: this.opts.nodeName ?? 'node', labels: {}, allocatable, gpus };
    }
    if (this.opts.nodeName) {
      const node = await this.opts.client.find(Kinds.Node, { name: this.opts.nodeName });
      if (node) return nodeView(node);
    }
    const nodes = await this.opts.client.listAll(Kinds.Node);
    return nodes[0] ? nodeView(nodes[0]) : undefined;
  }

  /**
   * Whether these Pods (not created yet) all fit beside what already holds room. Call inside
   * exclusive(), and create the Pods before leaving it.
   */
  async check(gang: Pod[]): Promise<GangVerdict> {
    const node = await this.node();
    if (!node || gang.length === 0) return { fits: true };
    const all = await this.opts.client.listAll<Pod>(Kinds.Pod);
    const holding = all.filter((p) => !terminal(p) && (p.spec.nodeName ? p.spec.nodeName === node.name : isTrainingPod(p)));
    const onEmpty = this.fitAll(gang, node, []);
    if (!onEmpty.fits) return { fits: false, never: true, reason: `the gang of ${gang.length} pod(s) needs more than the node has: ${onEmpty.reason}` };
    const now = this.fitAll(gang, node, holding);
    if (!now.fits) return { fits: false, never: false, reason: `waiting for room for the gang of ${gang.length} pod(s): ${now.reason}` };
    return { fits: true };
  }

  private fitAll(gang: Pod[], node: NodeView, holding: Pod[]): { fits: true } | { fits: false; reason: string } {
    const placed = [...holding];
    for (const pod of gang) {
      const r = this.placement.place(pod, node, placed);
      if (!r.fits) return { fits: false, reason: `${pod.metadata.name ?? ''}: ${r.reason}` };
      placed.push(withAssignment(pod, r, node.name));
    }
    return { fits: true };
  }
}

function isTrainingPod(p: Pod): boolean {
  return p.metadata.labels?.[TrainingLabels.operatorName] !== undefined && !p.metadata.deletionTimestamp;
}
