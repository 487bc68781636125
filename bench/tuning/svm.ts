// The real task: an RBF SVM (scikit-learn's SVC) on the digits data set, 3-fold cross-validated,
// minimising 1 - accuracy over C (log, 1e-3..1e3) and gamma (log, 1e-5..1e-1). The cross-validation
// runs in one persistent Python process (svm_worker.py); its time is not part of any contender's
// suggestion latency.
import type { Problem } from './problems.js';
import { JsonLinesWorker } from './worker.js';

export class SvmTask {
  private readonly worker = new JsonLinesWorker('svm_worker.py');
  /** evaluations answered and their total wall time, for the report */
  evaluations = 0;
  evaluationMs = 0;

  problem(): Problem {
    return {
      id: 'svm-digits',
      suite: 'svm',
      title: 'SVC on digits, 3-fold CV error',
      bounds: [
        { name: 'C', low: 1e-3, high: 1e3, log: true },
        { name: 'gamma', low: 1e-5, high: 1e-1, log: true },
      ],
      evaluate: async (x) => {
        const r = await this.worker.request<{ value: number; ms: number }>({ C: x[0], gamma: x[1] });
        this.evaluations++;
        this.evaluationMs += r.ms;
        return r.value;
      },
    };
  }

  close(): Promise<void> {
    return this.worker.close();
  }
}
