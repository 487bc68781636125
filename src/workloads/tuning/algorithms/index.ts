// The search algorithms by Katib's algorithmName. ENAS and DARTS (neural architecture search) are
// names Katib knows and Skiff does not run: an Experiment naming them is refused at creation, saying so.
import type { Algorithm } from './types.js';
import { cmaesAlgorithm } from './cmaes.js';
import { bayesianOptimizationAlgorithm } from './gp.js';
import { gridAlgorithm } from './grid.js';
import { hyperbandAlgorithm } from './hyperband.js';
import { pbtAlgorithm } from './pbt.js';
import { randomAlgorithm } from './random.js';
import { sobolAlgorithm } from './sobol.js';
import { multivariateTpeAlgorithm, tpeAlgorithm } from './tpe.js';

const algorithms = new Map<string, Algorithm>([randomAlgorithm, gridAlgorithm, sobolAlgorithm, tpeAlgorithm, multivariateTpeAlgorithm, hyperbandAlgorithm, pbtAlgorithm, bayesianOptimizationAlgorithm, cmaesAlgorithm].map((a) => [a.name, a]));

/** Katib's names Skiff refuses, and why */
export const notBuilt: Record<string, string> = {
  enas: 'Skiff does not run neural architecture search: ENAS needs Katib\'s TensorFlow controller, which Skiff does not include',
  darts: 'Skiff does not run neural architecture search: DARTS is not built',
};

export function algorithmByName(name: string): Algorithm | undefined {
  return algorithms.get(name);
}

export function algorithmNames(): string[] {
  return [...algorithms.keys()];
}
