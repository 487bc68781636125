/** `-o json|yaml|name` output. */
import { UsageError } from './errors.js';
import { loadYaml } from './manifests.js';
import type { KObject } from './types.js';

export type OutputFormat = 'table' | 'wide' | 'json' | 'yaml' | 'name';

export function parseOutput(value: string | undefined, allowed: OutputFormat[]): OutputFormat {
  if (value === undefined || value === '') return 'table';
  const v = value.toLowerCase() as OutputFormat;
  if (!allowed.includes(v) || v === 'table') {
    throw new UsageError(
      `unable to match a printer suitable for the output format "${value}", allowed formats are: ${allowed.filter((a) => a !== 'table').join(',')}`,
    );
  }
  return v;
}

export function asList(items: KObject[]): KObject {
  return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items };
}

export async function formatObject(obj: unknown, format: 'json' | 'yaml'): Promise<string> {
  if (format === 'json') return `${JSON.stringify(obj, null, 4)}\n`;
  const YAML = await loadYaml();
  return YAML.stringify(obj, { lineWidth: 0 });
}
