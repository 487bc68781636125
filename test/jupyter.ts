// Jupyter's kernel wire protocol over the server's channels WebSocket, as JupyterLab speaks it: an
// execute_request on `shell`, then the kernel's stream, display and result messages on `iopub` until
// its execute_reply and its return to idle.
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';

interface JupyterMessage {
  header: { msg_id: string; msg_type: string };
  parent_header: { msg_id?: string };
  channel: string;
  content: Record<string, unknown>;
}

export interface Execution {
  /** what the cell printed (stdout and stderr), and an error's name and value */
  stdout: string;
  /** the cell's value, as text/plain */
  result?: string;
  /** what the cell displayed (IPython.display), as text/html where it has it, else text/plain */
  displays: string[];
  /** the execute_reply's status: ok, error or aborted */
  status: string;
}

/** runs `code` in the kernel over its channels WebSocket (`url`, with `token` as a bearer token) */
export function execute(url: string, token: string, code: string, timeoutMs = 90_000): Promise<Execution> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
    const msgId = randomUUID();
    let stdout = '';
    let result: string | undefined;
    const displays: string[] = [];
    let status = '';
    let idle = false;
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`no reply to ${code} (printed so far: ${stdout})`));
    }, timeoutMs);
    ws.on('open', () => ws.send(JSON.stringify({
      header: { msg_id: msgId, username: 'test', session: randomUUID(), msg_type: 'execute_request', version: '5.3', date: new Date().toISOString() },
      parent_header: {}, metadata: {}, channel: 'shell', buffers: [],
      content: { code, silent: false, store_history: false, user_expressions: {}, allow_stdin: false, stop_on_error: true },
    })));
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as JupyterMessage;
      if (m.parent_header.msg_id !== msgId) return;
      const data0 = m.content.data as Record<string, string> | undefined;
      if (m.channel === 'iopub' && m.header.msg_type === 'stream') stdout += String(m.content.text);
      if (m.channel === 'iopub' && m.header.msg_type === 'execute_result') result = String(data0?.['text/plain']);
      if (m.channel === 'iopub' && m.header.msg_type === 'display_data') displays.push(String(data0?.['text/html'] ?? data0?.['text/plain']));
      if (m.channel === 'iopub' && m.header.msg_type === 'error') stdout += `${String(m.content.ename)}: ${String(m.content.evalue)}`;
      if (m.channel === 'shell' && m.header.msg_type === 'execute_reply') status = String(m.content.status);
      if (m.channel === 'iopub' && m.header.msg_type === 'status' && m.content.execution_state === 'idle') idle = true;
      // the reply on shell and the idle status on iopub come in either order: it ends when both have come
      if (status && idle) {
        clearTimeout(timer);
        ws.close();
        resolve({ stdout, ...(result !== undefined ? { result } : {}), displays, status });
      }
    });
    ws.on('unexpected-response', (_req, res) => {
      clearTimeout(timer);
      reject(new Error(`WebSocket refused: ${res.statusCode}`));
    });
    ws.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}
