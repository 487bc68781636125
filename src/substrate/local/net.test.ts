// build/skiff-net.so, the LD_PRELOAD library that narrows a Pod's wildcard binds to its Pod IP, tried
// on real Python and Node processes. Addresses come from 127.1.250.0/24, kept clear of real Pods.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../../../', import.meta.url));
const preload = path.join(repo, 'build/skiff-net.so');
const python = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const TIMEOUT_MS = 10_000;
const children = new Set<ChildProcess>();
const hostServers: net.Server[] = [];

before(() => {
  execFileSync('bash', [path.join(repo, 'scripts/build-native.sh')], { stdio: 'inherit' });
});
after(async () => {
  for (const c of children) c.kill('SIGKILL');
  await Promise.all(hostServers.map((s) => new Promise((resolve) => s.close(resolve))));
});

/** The environment of a process in a Pod; `ip` undefined leaves SKIFF_POD_IP out (preload still on). */
function podEnv(ip: string | undefined, ports: number[] = []): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LD_PRELOAD: preload, SKIFF_POD_PORTS: ports.join(','), PYTHONUNBUFFERED: '1' };
  if (ip === undefined) delete env.SKIFF_POD_IP;
  else env.SKIFF_POD_IP = ip;
  return env;
}

/** A port nothing listens on at any address: a wildcard bind in this (unpreloaded) process succeeds. */
async function freePort(): Promise<number> {
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 30000);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '0.0.0.0', () => s.close(() => resolve(true)));
    });
    if (ok) return port;
  }
}

/** Starts a long-running process and resolves with the first stdout line starting `ready`. */
function startServer(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`${cmd} not ready in ${TIMEOUT_MS} ms: ${err}`)), TIMEOUT_MS);
    child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').slice(0, -1).find((l) => l.startsWith('ready')); // complete lines only
      if (line !== undefined) { clearTimeout(timer); resolve(line); }
    });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`${cmd} exited ${code}: ${err}`)); });
  });
}

/** Runs a short Python script to completion and returns its stdout. */
function runPython(script: string, env: NodeJS.ProcessEnv, args: string[] = []): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(python, ['-c', script, ...args], { env, timeout: TIMEOUT_MS }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${error.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** Everything a TCP server sends before closing, read from this (unpreloaded) process. */
function readAll(host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    const sock = net.connect({ host, port });
    sock.setTimeout(TIMEOUT_MS, () => sock.destroy(new Error(`timeout reading ${host}:${port}`)));
    sock.on('data', (d: Buffer) => { data += d.toString(); });
    sock.once('end', () => resolve(data));
    sock.once('error', reject);
  });
}

async function httpGet(url: string): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  assert.equal(res.status, 200);
  return res.text();
}

const pyHttp = `
import os, sys
from http.server import HTTPServer, BaseHTTPRequestHandler
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        body = os.environ["SKIFF_POD_IP"].encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = HTTPServer(("", int(sys.argv[1])), H)
print("ready", server.server_address[0], flush=True)
server.serve_forever()
`;

// Answers every connection with its Pod IP; listen(port) binds '::' (dual stack) by default.
const nodeTcp = `
const net = require('node:net');
const host = process.argv[2] || undefined;
const s = net.createServer((c) => c.end(process.env.SKIFF_POD_IP)).listen(Number(process.argv[1]), host, () => {
  console.log('ready ' + s.address().address);
});
`;

// A UDP server on the wildcard address that answers each datagram with its Pod IP.
const pyUdp = `
import os, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("", int(sys.argv[1])))
print("ready", s.getsockname()[0], flush=True)
while True:
    _, peer = s.recvfrom(100)
    s.sendto(os.environ["SKIFF_POD_IP"].encode(), peer)
`;

void describe('skiff-net.so', () => {
  void test('two Python HTTPServer(("", P)) in different Pods share port P', async () => {
    const port = await freePort();
    const a = await startServer(python, ['-c', pyHttp, String(port)], podEnv('127.1.250.1', [port]));
    const b = await startServer(python, ['-c', pyHttp, String(port)], podEnv('127.1.250.2', [port]));
    assert.equal(a, 'ready 127.1.250.1');
    assert.equal(b, 'ready 127.1.250.2');
    assert.equal(await httpGet(`http://127.1.250.1:${port}/`), '127.1.250.1');
    assert.equal(await httpGet(`http://127.1.250.2:${port}/`), '127.1.250.2');
  });

  void test('two Node servers listen(P) (binding "::") in different Pods share port P', async () => {
    const port = await freePort();
    const a = await startServer(process.execPath, ['-e', nodeTcp, String(port)], podEnv('127.1.250.3', [port]));
    const b = await startServer(process.execPath, ['-e', nodeTcp, String(port)], podEnv('127.1.250.4', [port]));
    assert.equal(a, 'ready ::ffff:127.1.250.3');
    assert.equal(b, 'ready ::ffff:127.1.250.4');
    assert.equal(await readAll('127.1.250.3', port), '127.1.250.3');
    assert.equal(await readAll('127.1.250.4', port), '127.1.250.4');
    // listen(P, '0.0.0.0') is narrowed too
    const port2 = await freePort();
    const c = await startServer(process.execPath, ['-e', nodeTcp, String(port2), '0.0.0.0'], podEnv('127.1.250.5', [port2]));
    assert.equal(c, 'ready 127.1.250.5');
    assert.equal(await readAll('127.1.250.5', port2), '127.1.250.5');
  });

  void test('localhost:P reaches the own Pod for declared ports only', async () => {
    const ip = '127.1.250.6';
    const [declared, undeclared, udp] = [await freePort(), await freePort(), await freePort()];
    // Both servers bind the wildcard, narrowed to the Pod IP: 127.0.0.1 alone would not reach them.
    assert.equal(await startServer(process.execPath, ['-e', nodeTcp, String(declared)], podEnv(ip, [declared])), `ready ::ffff:${ip}`);
    assert.equal(await startServer(python, ['-c', pyUdp, String(udp)], podEnv(ip, [udp])), `ready ${ip}`);
    await assert.rejects(readAll('127.0.0.1', declared), /ECONNREFUSED/);
    const host = net.createServer((c) => c.end('host')); // in this process: no preload
    hostServers.push(host);
    await new Promise<void>((resolve, reject) => { host.once('error', reject); host.listen(undeclared, '127.0.0.1', resolve); });

    const client = `
import socket, sys
declared, undeclared, udp = map(int, sys.argv[1:4])
def read(family, addr):
    with socket.socket(family) as s:
        s.settimeout(5)
        s.connect(addr)
        return s.recv(100).decode()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.settimeout(5)
u.sendto(b"hi", ("127.0.0.1", udp))
print(read(socket.AF_INET, ("127.0.0.1", declared)), read(socket.AF_INET6, ("::1", declared)),
      read(socket.AF_INET, ("127.0.0.1", undeclared)), u.recvfrom(100)[0].decode())
`;
    const out = await runPython(client, podEnv(ip, [declared, udp]), [String(declared), String(undeclared), String(udp)]);
    assert.equal(out.trim(), `${ip} ${ip} host ${ip}`);
  });

  void test('a process reaches its own narrowed server on an undeclared port via localhost', async () => {
    const script = `
import socket, threading, urllib.request
from http.server import HTTPServer, BaseHTTPRequestHandler
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"hi")
    def log_message(self, *args):
        pass
server = HTTPServer(("", 0), H)
threading.Thread(target=server.serve_forever, daemon=True).start()
body = urllib.request.urlopen("http://127.0.0.1:%d/" % server.server_address[1], timeout=5).read().decode()
print(server.server_address[0], body)
`;
    assert.equal((await runPython(script, podEnv('127.1.250.9'))).trim(), '127.1.250.9 hi');
  });

  const bound = `
import socket
def name(family, addr, type=socket.SOCK_STREAM):
    with socket.socket(family, type) as s:
        s.bind(addr)
        return s.getsockname()[0]
print(name(socket.AF_INET, ("", 0)), name(socket.AF_INET6, ("::", 0)), name(socket.AF_INET, ("0.0.0.0", 0), socket.SOCK_DGRAM),
      name(socket.AF_INET, ("127.0.0.1", 0)), name(socket.AF_INET6, ("::1", 0)), name(socket.AF_INET, ("127.1.250.77", 0)))
`;

  void test('without a valid SKIFF_POD_IP nothing changes', async () => {
    for (const ip of [undefined, '', 'not-an-ip', '0.0.0.0']) {
      assert.equal((await runPython(bound, podEnv(ip))).trim(), '0.0.0.0 :: 0.0.0.0 127.0.0.1 ::1 127.1.250.77', `SKIFF_POD_IP=${ip}`);
    }
  });

  void test('specific addresses are left alone; only wildcard binds are narrowed', async () => {
    // An ephemeral UDP wildcard bind is a client's and stays wildcard (see skiff-net.c).
    assert.equal((await runPython(bound, podEnv('127.1.250.8'))).trim(), '127.1.250.8 ::ffff:127.1.250.8 0.0.0.0 127.0.0.1 ::1 127.1.250.77');
  });
});
