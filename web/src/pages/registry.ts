// Every folder under pages/ with an index.tsx exporting `pages` adds its pages: nothing else to edit.
import type { PageDef } from './types';

const modules = import.meta.glob<{ pages?: PageDef[] }>('./*/index.tsx', { eager: true });

export const allPages: PageDef[] = Object.values(modules)
  .flatMap((m) => m.pages ?? [])
  .sort((a, b) => (a.order ?? 100) - (b.order ?? 100) || a.title.localeCompare(b.title));

const byPlural = new Map(allPages.map((p) => [p.plural, p]));

export function pageFor(plural: string): PageDef | undefined {
  return byPlural.get(plural);
}
