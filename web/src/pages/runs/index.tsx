import type { PageDef } from '../types';
import { RunDetail } from './RunDetail';
import { RunList } from './RunList';
import './runs.css';

export const pages: PageDef[] = [{ plural: 'runs', title: 'Runs', section: 'Pipelines', order: 20, list: RunList, detail: RunDetail }];
