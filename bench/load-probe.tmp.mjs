import { ExecServerClient } from '@execd/exec-client';
import { startExecdServer, startPeerServer, log } from './lib/servers.mjs';
const CODEC = process.env.CODEC ?? 'json';
const CLIENTS = 200, PROCS = 5;
async function drain(proc) { let bytes = 0; for await (const e of proc.events({})) { if (e.type === 'output') bytes += e.chunk.byteLength; if (e.type === 'closed') break; } return bytes; }
async function load(url, codec) {
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => ExecServerClient.connect({ url, codec, clientName: 'x' })));
  const t = performance.now();
  const totals = await Promise.all(clients.flatMap((client, c) => Array.from({ length: PROCS }, async (_, p) => {
    const proc = await client.start({ processId: `l-${c}-${p}`, argv: ['seq', '1', '20000'], cwd: 'file:///tmp', env: { PATH: '/usr/bin:/bin' }, tty: false, pipeStdin: false, enforceManagedNetwork: false });
    return drain(proc);
  })));
  const s = (performance.now() - t) / 1000;
  await Promise.all(clients.map((c) => c.close()));
  return totals.reduce((a, b) => a + b, 0) / 1e6 / s;
}
import { readFileSync as rf, readdirSync as rd } from 'node:fs';
function cpuOf(pid) { try { const f = rf(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return f.slice(11, 15).map(Number); } catch { return [0,0,0,0]; } }
function kids(pid) { return rd('/proc').filter(n => /^\d+$/.test(n)).filter(n => { try { return rf(`/proc/${n}/stat`, 'utf8').split(') ')[1].split(' ')[1] === String(pid); } catch { return false; } }).map(Number); }
const server = process.env.ORIG ? await startPeerServer(process.env.ORIG) : await startExecdServer();
import { rssBytes } from "./lib/servers.mjs";
for (let i = 0; i < Number(process.env.ROUNDS ?? 1); i++) { log(`rss before ${rssBytes(server.servingPid())>>20}`); log(`${CODEC} ${(await load(server.url, CODEC)).toFixed(2)} MB/s`); log(`rss after ${rssBytes(server.servingPid())>>20}`); const sp = server.servingPid(); log(`server cpu ticks u/s/cu/cs ${cpuOf(sp)}`); for (const k of kids(sp)) log(`child ${k} ${rf(`/proc/${k}/comm`,'utf8').trim()} ${cpuOf(k)}`); const c = process.cpuUsage(); log(`client cpu ms ${(c.user/1000)|0} ${(c.system/1000)|0}`); }
await server.stop();
