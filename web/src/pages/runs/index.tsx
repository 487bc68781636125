import type { PageDef } from '../types';
import { RunDetail } from './RunDetail';
import './runs.css';

export const pages: PageDef[] = [{ plural: 'runs', title: 'Runs', section: 'Pipelines', order: 20, detail: RunDetail }];
