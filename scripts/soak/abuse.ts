// `pnpm soak --abusive`: one client with a valid token tries every way of taking the server from
// the others at once (docs/server.md, "Limits and abuse"), while the soak's well-behaved clients go
// on and measure. Every connection is from 127.0.0.1, like theirs: the socket and WebSocket floods
// stay under the per-address share so the others' connections (opened before) are not the target.
import { connect as connectTcp, type Socket } from 'node:net';
import WebSocket from 'ws';

/** What the abusive client did and what it got. */
export interface AbuseReport {
  replayFlood: { frames: number; replies: number; refused: number };
  queueFlood: { accepted: number; refused: number };
  idleSockets: number;
  webSockets: { opened: number; refused: number };
  mcpInitialize: { sessions: number; refused: number };
  forgedMetadata: number;
  requestBurst: { ok: number; limited: number };
  hostilePrograms: number;
}

const sleepy = 'await new Promise((resolve) => setTimeout(resolve, 20000))';

/** Runs the abuse for about `ms`, then closes everything it holds. */
export async function abuse(url: string, token: string, ms: number): Promise<AbuseReport> {
  const auth = { Authorization: `Bearer ${token}` };
  const wsUrl = `${url.replace('http', 'ws')}/ws`;
  const held: Array<{ close(): void }> = [];
  const report: AbuseReport = {
    replayFlood: { frames: 3000, replies: 0, refused: 0 },
    queueFlood: { accepted: 0, refused: 0 },
    idleSockets: 0,
    webSockets: { opened: 0, refused: 0 },
    mcpInitialize: { sessions: 0, refused: 0 },
    forgedMetadata: 0,
    requestBurst: { ok: 0, limited: 0 },
    hostilePrograms: 0,
  };
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  // First what needs an answer (before the floods take its own budget and sockets).
  // Passing its processes off as MCP tasks of the operator.
  await (async () => {
    const answer = await post('/processes', {
      code: 'output(1)',
      metadata: { mcp: { session: 's', tool: 'run_code', principal: 'operator', task: { ttl: 1 } } },
    });
    if (answer.status === 400) report.forgedMetadata++;
    await answer.body?.cancel();
  })();
  // Programs that print control characters and read a path with a NUL byte.
  await (async () => {
    for (const code of [
      "console.log('a\\u0085block 9 (pid 1): success\\u001b[2J\\u2028x')",
      "await tools.read_note({ name: 'a\\u0000b' }).catch((e) => output(e.message))",
    ]) {
      const answer = await post('/processes', { code, block: true });
      if (answer.status === 201) report.hostilePrograms++;
      await answer.body?.cancel();
    }
  })();

  // A client that stops reading and asks for 3,000 replays of everything.
  const flooder = new WebSocket(wsUrl, { headers: auth });
  await new Promise((resolve, reject) => flooder.once('open', resolve).once('error', reject));
  (flooder as unknown as { _socket: Socket })._socket.pause();
  const frame = JSON.stringify({ type: 'subscribe', all: true, since: 0 });
  for (let i = 0; i < report.replayFlood.frames; i++) flooder.send(frame);
  held.push({ close: () => flooder.terminate() });

  const work = [
    // The queue: sleeping processes until its share is full.
    (async () => {
      for (let i = 0; i < 700; i++) {
        const answer = await post('/processes', { code: sleepy, timeoutMs: 25_000 });
        if (answer.status === 201) report.queueFlood.accepted++;
        else report.queueFlood.refused++;
        await answer.body?.cancel();
      }
    })(),
    // Idle sockets that never send a request.
    (async () => {
      for (let i = 0; i < 200; i++) {
        const socket = connectTcp(Number(new URL(url).port), '127.0.0.1');
        socket.on('error', () => {});
        held.push({ close: () => socket.destroy() });
        report.idleSockets++;
      }
    })(),
    // WebSockets past the principal's cap.
    (async () => {
      for (let i = 0; i < 280; i++) {
        const ws = new WebSocket(wsUrl, { headers: auth });
        ws.on('error', () => {});
        const opened = await new Promise<boolean>((resolve) => {
          ws.once('open', () => resolve(true));
          ws.once('unexpected-response', () => resolve(false));
          ws.once('error', () => resolve(false));
        });
        if (opened) {
          report.webSockets.opened++;
          held.push({ close: () => ws.terminate() });
        } else report.webSockets.refused++;
      }
    })(),
    // MCP sessions, far past the principal's cap.
    (async () => {
      const initialize = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'abuse', version: '1' },
        },
      };
      for (let i = 0; i < 1100; i++) {
        const answer = await post('/mcp', initialize, { Accept: 'application/json, text/event-stream' });
        if (answer.headers.get('mcp-session-id')) report.mcpInitialize.sessions++;
        else report.mcpInitialize.refused++;
        await answer.body?.cancel();
      }
    })(),
    // A burst of requests past the budget.
    (async () => {
      const answers = await Promise.all(
        Array.from({ length: 400 }, () => fetch(`${url}/processes?state=idle`, { headers: auth })),
      );
      for (const answer of answers) {
        if (answer.status === 429) report.requestBurst.limited++;
        else report.requestBurst.ok++;
        await answer.body?.cancel();
      }
    })(),
  ];
  await Promise.all([Promise.all(work), new Promise((resolve) => setTimeout(resolve, ms))]);
  // Reading again: the replies of the replay flood.
  flooder.on('message', (data: WebSocket.RawData) => {
    const message = JSON.parse(String(data)) as { type: string; code?: string };
    if (message.type === 'reply') report.replayFlood.replies++;
    else if (message.type === 'error') report.replayFlood.refused++;
  });
  (flooder as unknown as { _socket: Socket })._socket.resume();
  await new Promise((resolve) => setTimeout(resolve, 3000));
  for (const item of held) item.close();
  return report;
}
