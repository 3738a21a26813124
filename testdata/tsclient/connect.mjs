// A TypeScript SDK host of one session, driven step by step by a Go test
// (cmd/mcpsandbox/daemon_tshost_test.go): it reads one JSON command a line
// on stdin and answers each with one JSON line on stdout.
//
//   node connect.mjs '{"v1": dir of @modelcontextprotocol/sdk, "v2": dir of @modelcontextprotocol/client}'
//
// Commands:
//   {"op": "connect", "sdk": "v1"|"v2", "mode": "legacy"|"auto"|"2026-07-28", "command", "args"}
//       → {"pid": the server command's pid, "protocol": the negotiated version}
//   {"op": "tools"} → {"tools": [names]}
//   {"op": "call", "name", "arguments"} → {"text", "isError"}
//   {"op": "close"} → {} (then the script exits)
// A failed step answers {"error": {"code", "message", "data"}} instead.
//
// The server is spawned by the SDK's StdioClientTransport with no env of
// its own, so it gets only what the SDK passes on (HOME, LOGNAME, PATH,
// SHELL, TERM, USER), as hosts start servers.
import path from 'node:path';
import readline from 'node:readline';
import { pathToFileURL } from 'node:url';

const dirs = JSON.parse(process.argv[2]);
const load = (dir, file) => import(pathToFileURL(path.join(dir, file)).href);

let client;
let transport;
let negotiated;

async function connect(cmd) {
  const info = { name: 'daemon-e2e-ts', version: '1' };
  if (cmd.sdk === 'v1') {
    const { Client } = await load(dirs.v1, 'dist/esm/client/index.js');
    const { StdioClientTransport } = await load(dirs.v1, 'dist/esm/client/stdio.js');
    client = new Client(info);
    transport = new StdioClientTransport({ command: cmd.command, args: cmd.args });
    // v1 tells the transport the version initialize settled on.
    transport.setProtocolVersion = (v) => { negotiated = v; };
    await client.connect(transport);
    return { pid: transport.pid, protocol: negotiated };
  }
  const { Client } = await load(dirs.v2, 'dist/index.mjs');
  const { StdioClientTransport } = await load(dirs.v2, 'dist/stdio.mjs');
  const mode = cmd.mode === 'legacy' || cmd.mode === 'auto' ? cmd.mode : { pin: cmd.mode };
  client = new Client(info, { versionNegotiation: { mode } });
  transport = new StdioClientTransport({ command: cmd.command, args: cmd.args });
  await client.connect(transport);
  return { pid: transport.pid, protocol: client.getNegotiatedProtocolVersion() };
}

async function step(cmd) {
  switch (cmd.op) {
    case 'connect':
      return connect(cmd);
    case 'tools': {
      const res = await client.listTools();
      return { tools: res.tools.map((t) => t.name) };
    }
    case 'call': {
      const res = await client.callTool({ name: cmd.name, arguments: cmd.arguments ?? {} });
      const text = (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('');
      return { text, isError: res.isError === true };
    }
    case 'close':
      await client?.close();
      return {};
    default:
      throw new Error(`unknown op ${cmd.op}`);
  }
}

function errorOf(e) {
  if (typeof e?.code === 'number') {
    // McpError's message is "MCP error CODE: " + the one on the wire.
    const prefix = `MCP error ${e.code}: `;
    const message = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
    return { code: e.code, message, data: e.data ?? null };
  }
  return { message: String(e?.stack ?? e) };
}

const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  const cmd = JSON.parse(line);
  let answer;
  try {
    answer = await step(cmd);
  } catch (e) {
    answer = { error: errorOf(e) };
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
  if (cmd.op === 'close') break;
}
process.exit(0);
