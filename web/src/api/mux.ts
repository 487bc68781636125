// The page's live streams (watches, followed logs, usage) over one WebSocket (/skiff/v1/streams, see
// src/server/stream-mux.ts): a browser holds at most six HTTP/1.1 connections to a server, and a page
// with a few live lists and a log would otherwise stall waiting for one.
import { errorFromBody } from './errors';
import { wsProtocols } from './session';

interface Pending {
  status?: number;
  errorBody: string;
  onData: (chunk: string) => void;
  resolve: () => void;
  reject: (e: Error) => void;
}

export class StreamMux {
  private ws?: WebSocket;
  private opening?: Promise<WebSocket>;
  private nextId = 1;
  private readonly streams = new Map<number, Pending>();

  private closed = false;

  /** `token`: the signed-in user's, carried in the WebSocket's protocols (a browser sets no headers on one) */
  constructor(private readonly url: string, private readonly token?: string) {}

  /** closes the connection for good: its streams end and no new ones open */
  close(): void {
    this.closed = true;
    this.ws?.close();
  }

  private connect(): Promise<WebSocket> {
    if (this.closed) return Promise.reject(new Error('signed out'));
    if (this.ws && this.ws.readyState === WebSocket.OPEN) return Promise.resolve(this.ws);
    this.opening ??= new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(this.url, wsProtocols(this.token));
      ws.onopen = () => {
        this.ws = ws;
        this.opening = undefined;
        resolve(ws);
      };
      ws.onerror = () => undefined;
      ws.onclose = () => {
        if (this.ws === ws) this.ws = undefined;
        if (this.opening) {
          this.opening = undefined;
          reject(new Error('cannot reach the server'));
        }
        // every stream on it ends as a lost connection: their owners retry, which reconnects
        for (const [id, s] of this.streams) {
          this.streams.delete(id);
          s.reject(new Error('the connection to the server was lost'));
        }
      };
      ws.onmessage = (ev) => this.receive(String(ev.data));
    });
    return this.opening;
  }

  private receive(raw: string): void {
    let m: { id?: number; status?: number; data?: string; end?: boolean; error?: string };
    try {
      m = JSON.parse(raw) as typeof m;
    } catch {
      return;
    }
    const s = m.id !== undefined ? this.streams.get(m.id) : undefined;
    if (!s || m.id === undefined) return;
    if (m.status !== undefined) s.status = m.status;
    if (m.data !== undefined) {
      if (s.status !== undefined && s.status >= 400) s.errorBody += m.data;
      else {
        try {
          s.onData(m.data);
        } catch (e) {
          // the reader refused what came (a watch's ERROR event): this stream is over
          this.streams.delete(m.id);
          if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ op: 'close', id: m.id }));
          s.reject(e instanceof Error ? e : new Error(String(e)));
          return;
        }
      }
    }
    if (m.error !== undefined) {
      this.streams.delete(m.id);
      s.reject(new Error(m.error));
    } else if (m.end) {
      this.streams.delete(m.id);
      if (s.status !== undefined && s.status >= 400) {
        let body: unknown = s.errorBody;
        try {
          body = JSON.parse(s.errorBody);
        } catch {
          /* text */
        }
        s.reject(errorFromBody(s.status, body, s.errorBody.trim() || `HTTP ${s.status}`));
      } else s.resolve();
    }
  }

  /** GETs `path` and hands its body over as it arrives; resolves when the body ends */
  async get(path: string, onData: (chunk: string) => void, signal: AbortSignal): Promise<void> {
    const ws = await this.connect();
    if (signal.aborted) return;
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        if (!this.streams.delete(id)) return;
        if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ op: 'close', id }));
        resolve();
      };
      this.streams.set(id, {
        errorBody: '',
        onData,
        resolve: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
        reject: (e) => {
          signal.removeEventListener('abort', onAbort);
          reject(e);
        },
      });
      signal.addEventListener('abort', onAbort);
      ws.send(JSON.stringify({ op: 'open', id, path }));
    });
  }
}
