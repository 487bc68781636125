// A pipeline artifact, rendered by its type (system.Metrics, system.ClassificationMetrics, system.HTML,
// system.Markdown, system.Dataset, system.Model, …). The run page's task panel and the compare page
// show artifacts only through this component.
import type { RunArtifact } from '../api/types';

export interface ArtifactViewProps {
  artifact: RunArtifact;
  namespace: string;
  /** the run (its KFP id is its name) and the task path whose output or input this is */
  run: string;
  task: string;
  /** the output (or input) name on the task, for the read-back endpoint */
  output: string;
  /** its index in that output's list */
  index?: number;
  /** smaller rendering for side-by-side comparison */
  compact?: boolean;
}

export function ArtifactView({ artifact }: ArtifactViewProps) {
  return (
    <div className="card">
      <h3>
        {artifact.name} <span className="muted">{String(artifact.type?.schemaTitle ?? '')}</span>
      </h3>
      <code>{artifact.uri}</code>
      <pre>{JSON.stringify(artifact.metadata ?? {}, null, 2)}</pre>
    </div>
  );
}
