// A pipeline artifact, rendered by its type (system.Metrics, system.ClassificationMetrics, system.HTML,
// system.Markdown, system.Dataset, system.Model, …). The run page's task panel and the compare page
// show artifacts only through this component.
import type { ComponentType } from 'react';
import type { RunArtifact } from '../api/types';
import { href } from '../app/router';
import { Link, useRoute } from '../app/nav';
import { schemaOf } from './model';
import { ClassificationView, GenericView, HtmlView, MarkdownView, MetricsView } from './views';
import './artifacts.css';

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

/** renderers by schema title; any other type gets the generic one (metadata, URI, text preview) */
export const RENDERERS: Record<string, ComponentType<ArtifactViewProps>> = {
  'system.Metrics': MetricsView,
  'system.ClassificationMetrics': ClassificationView,
  'system.HTML': HtmlView,
  'system.Markdown': MarkdownView,
};

/** the full-size page of one artifact */
export function artifactHref(p: Pick<ArtifactViewProps, 'namespace' | 'run' | 'task' | 'output' | 'index'>): string {
  return href({ namespace: p.namespace, plural: 'artifact', query: { run: p.run, task: p.task, output: p.output, index: String(p.index ?? 0) } });
}

export function ArtifactView(props: ArtifactViewProps) {
  const { artifact, compact } = props;
  const schema = schemaOf(artifact);
  const View = RENDERERS[schema] ?? GenericView;
  // everywhere but on its own page (the run page's task panel, compare), a link to the full-size view
  const onOwnPage = useRoute().plural === 'artifact';
  return (
    <section className={`card artifact${compact ? ' compact' : ''}`} aria-label={`artifact ${artifact.name}`}>
      <header className="artifact-head">
        <h3>
          {artifact.name} <span className="kindtag">{schema || 'no type'}</span>
        </h3>
        {onOwnPage ? null : (
          <Link className="small" to={artifactHref(props)} aria-label={`Open ${artifact.name} full size`}>
            Open
          </Link>
        )}
      </header>
      <View {...props} />
    </section>
  );
}
