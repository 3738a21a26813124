// The TypeScript SDK client as the host of a pinned server
// (cmd/mcpsandbox/pinned_hosts_test.go runs it): it spawns mcpsandbox with
// StdioClientTransport, lists the tools, calls each tool of the plan, and
// prints one JSON line: the tools listed, the instructions, the annotations
// of each tool, and per call its text or its error's code, message and data.
//
//   node pinned.mjs PLAN_JSON
//
// PLAN_JSON: {"sdk": dir of @modelcontextprotocol/sdk, "command", "args",
// "calls": [tool names]}.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const plan = JSON.parse(process.argv[2]);
const sdk = (file) => import(pathToFileURL(path.join(plan.sdk, 'dist', 'esm', file)).href);
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');

const client = new Client({ name: 'pinned-host', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command: plan.command, args: plan.args, stderr: 'inherit' }));
const { tools } = await client.listTools();
const out = {
  tools: tools.map((t) => t.name).sort(),
  annotations: Object.fromEntries(tools.map((t) => [t.name, t.annotations ?? null])),
  instructions: client.getInstructions() ?? '',
  calls: {},
};
for (const name of plan.calls) {
  try {
    const res = await client.callTool({ name, arguments: {} });
    out.calls[name] = { text: (res.content ?? []).map((c) => c.text).join('\n') };
  } catch (e) {
    const prefix = `MCP error ${e.code}: `;
    out.calls[name] = { code: e.code, message: e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message, data: e.data ?? null };
  }
}
console.log(JSON.stringify(out));
await client.close();
