// Requests per second and latency of sequential HTTP GETs to a local origin through the network
// proxy's unix socket (absolute-form requests, keep-alive on both hops) versus directly.
// Rounds alternate direct/proxy so load on the shared machine hits both alike; the ratio comes
// from this one run. Needs `dist/` (pnpm build). Last stdout line: the JSON result.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import { emit, figure } from '../../../bench/lib/measure.mjs';
import { startNetworkProxy } from '../dist/index.js';

/** Sequential GETs per round (the figure the task asks for). */
const REQUESTS = 200;
/** Rounds per side; the median round is reported. */
const ROUNDS = 5;

// The origin runs in its own process: the proxy never connects to a port of its own process.
const ORIGIN_SOURCE = `
const server = require('node:http').createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
  res.end('ok');
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
process.stdin.on('end', () => process.exit(0)).resume();
`;
const origin = spawn(process.execPath, ['-e', ORIGIN_SOURCE], { stdio: ['pipe', 'pipe', 'inherit'] });
const [portLine] = await once(origin.stdout.setEncoding('utf8'), 'data');
const port = Number(String(portLine).trim());
const proxy = await startNetworkProxy({ loopbackPorts: [port] });

function get(options) {
  return new Promise((resolve, reject) => {
    const req = http.request(options, (res) => {
      res.resume();
      res.once('end', resolve);
    });
    req.once('error', reject);
    req.end();
  });
}

async function round(options) {
  const started = performance.now();
  for (let i = 0; i < REQUESTS; i++) await get(options);
  return performance.now() - started;
}

const directAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const proxyAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const direct = { host: '127.0.0.1', port, path: '/', agent: directAgent };
const viaProxy = {
  socketPath: proxy.httpSocketPath,
  path: `http://127.0.0.1:${port}/`,
  headers: { host: `127.0.0.1:${port}` },
  agent: proxyAgent,
};

// Warm-up: connections, JIT.
await round(direct);
await round(viaProxy);
const samples = { direct: [], proxy: [] };
for (let r = 0; r < ROUNDS; r++) {
  samples.direct.push(await round(direct));
  samples.proxy.push(await round(viaProxy));
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const directMs = median(samples.direct);
const proxyMs = median(samples.proxy);
const rps = (ms) => (REQUESTS * 1000) / ms;
const latency = (ms) => ms / REQUESTS;

console.log(
  `${REQUESTS} sequential GETs: direct ${rps(directMs).toFixed(0)} req/s (${latency(directMs).toFixed(3)} ms), ` +
    `via proxy ${rps(proxyMs).toFixed(0)} req/s (${latency(proxyMs).toFixed(3)} ms); ` +
    `decisions recorded: ${proxy.decisions().length}, denials: ${proxy.denials().length}`,
);

directAgent.destroy();
proxyAgent.destroy();
await proxy.close();
const originClosed = once(origin, 'close');
origin.stdin.end();
await originClosed;

emit('network-proxy', [
  figure({
    figure: `${REQUESTS} sequential HTTP GETs: throughput`,
    execd: rps(proxyMs),
    baseline: rps(directMs),
    baselineName: 'direct',
    unit: 'req/s',
  }),
  figure({
    figure: `${REQUESTS} sequential HTTP GETs: latency per request`,
    execd: latency(proxyMs),
    baseline: latency(directMs),
    baselineName: 'direct',
    unit: 'ms',
  }),
  figure({
    figure: 'latency added by the proxy per request',
    execd: latency(proxyMs) - latency(directMs),
    unit: 'ms',
  }),
]);
