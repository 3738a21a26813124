// Starts one server entry of a host's configuration the way Claude Desktop
// does, with the TypeScript SDK's StdioClientTransport: the entry's command
// and args, and its env over the few variables the SDK passes on (HOME,
// LOGNAME, PATH, SHELL, TERM, USER). cmd/mcpsandbox/wrap_hosts_test.go runs
// it on a wrapped entry. It lists the tools, makes an entity in the memory
// server and reads the graph back, and prints one JSON line of what it saw.
//
//   node wrapped.mjs '{"sdk": DIR, "command": ..., "args": [...], "env": {...}}'
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const entry = JSON.parse(process.argv[2]);
const sdk = (file) => import(pathToFileURL(path.join(entry.sdk, 'dist', 'esm', file)).href);
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');

const text = (res) => (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

const client = new Client({ name: 'claude-desktop-like', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command: entry.command, args: entry.args, env: entry.env, stderr: 'inherit' }));
const tools = (await client.listTools()).tools.map((t) => t.name);
const created = await client.callTool({
  name: 'create_entities',
  arguments: { entities: [{ name: 'wrapped-ts', entityType: 'test', observations: ['made through the wrapped entry'] }] },
});
const graph = await client.callTool({ name: 'read_graph', arguments: {} });
console.log(JSON.stringify({ tools, createdError: !!created.isError, graph: text(graph) }));
await client.close();
