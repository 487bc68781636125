// Every kind without a page of its own: the generic list and object pages.
import { ObjectList } from '../../components/ObjectList';
import { ObjectPage } from '../../components/ObjectPage';
import type { DetailPageProps, ListPageProps } from '../types';

export function GenericList({ kind, namespace }: ListPageProps) {
  return <ObjectList kind={kind} namespace={namespace} />;
}

export function GenericDetail({ kind, namespace, name }: DetailPageProps) {
  return <ObjectPage kind={kind} namespace={namespace} name={name} />;
}

export const pages = [];
