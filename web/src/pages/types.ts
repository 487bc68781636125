// A page of the dashboard is one folder under pages/ whose index.tsx exports `pages: PageDef[]`.
// pages/registry.ts finds them all; a kind without one gets the generic list and object pages.
import type { ComponentType, ReactNode } from 'react';
import type { KindInfo } from '../api/kinds';
import type { KObject } from '../api/types';

export interface ListPageProps {
  kind: KindInfo;
  /** undefined: every namespace */
  namespace?: string;
}

export interface DetailPageProps {
  kind: KindInfo;
  namespace?: string;
  name: string;
  /** path segments after the name */
  rest: string[];
}

export interface DetailTab<T extends KObject = KObject> {
  id: string;
  label: string;
  render: (obj: T) => ReactNode;
}

export type NavSection = 'Pipelines' | 'Training' | 'Tuning' | 'Serving' | 'Notebooks' | 'Queues' | 'Workloads' | 'Cluster' | 'Config';

export interface PageDef {
  /** the kind's plural, or a page's own name (`compare`) when `page` is set */
  plural: string;
  /** the plural's name in the navigation ("Runs") */
  title: string;
  /** where the navigation lists it; none: not listed (still reachable by URL) */
  section?: NavSection;
  order?: number;
  list?: ComponentType<ListPageProps>;
  detail?: ComponentType<DetailPageProps>;
  /** a page with no kind behind it */
  page?: ComponentType<{ namespace?: string }>;
  /** the navigation shows it for cluster scope (nodes) */
  cluster?: boolean;
  /** other plurals whose pages count as this entry's in the navigation (a model's versions are the Models') */
  navFor?: string[];
}
