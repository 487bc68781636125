// The documents a sandboxed iframe shows for HTML and Markdown artifacts. The iframe's sandbox=""
// already forbids scripts and same-origin access; the Content-Security-Policy written first in each
// document forbids them a second time, should the iframe ever be rendered without its sandbox.
import { marked } from 'marked';

const CSP = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">`;

export interface DocColors {
  text: string;
  background: string;
  border: string;
  link: string;
}

/** an HTML artifact as it was written, behind the policy */
export function htmlSrcdoc(html: string): string {
  return `${CSP}${html}`;
}

/** a Markdown artifact rendered to HTML, styled in the dashboard's colours */
export function markdownSrcdoc(md: string, c: DocColors): string {
  const body = marked.parse(md, { async: false, gfm: true });
  const style = `body{font:14px/1.5 system-ui,sans-serif;color:${c.text};background:${c.background};margin:8px 12px}
a{color:${c.link}}table{border-collapse:collapse}th,td{border:1px solid ${c.border};padding:3px 8px}
pre,code{background:rgba(127,127,127,.15);border-radius:4px}pre{padding:8px;overflow:auto}img{max-width:100%}`;
  return `${CSP}<!doctype html><html><head><meta charset="utf-8"><style>${style}</style></head><body>${body}</body></html>`;
}
