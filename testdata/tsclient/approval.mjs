// The TypeScript SDK client as a host that shows mcpsandbox's approval
// questions (cmd/mcpsandbox/approval_tsclient_test.go runs it): it declares
// elicitation, spawns mcpsandbox with StdioClientTransport, and for each
// step of the plan answers the question as the step says, calls the tool
// with the step's arguments, and prints one JSON line per step: the text
// or the error's code and data, how many questions it was asked, whether
// each question read as mcpsandbox's, and whether the step's file exists.
//
//   node approval.mjs PLAN_JSON
//
// PLAN_JSON: {"sdk": dir of @modelcontextprotocol/sdk, "command", "args",
// "tool", "steps": [{"name", "answer": allow-once | allow-session | deny |
// decline | cancel | malformed | never, "file", "arguments"}]}. With "v2"
// (dir of @modelcontextprotocol/client) the host is the v2 client pinned to
// the 2026-07-28 session, where the question comes inside an input_required
// result and the client retries the call with its answer.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const plan = JSON.parse(process.argv[2]);
const load = (dir, file) => import(pathToFileURL(path.join(dir, file)).href);
let client, StdioClientTransport, elicitation;
if (plan.v2) {
  ({ StdioClientTransport } = await load(plan.v2, 'dist/stdio.mjs'));
  const { Client } = await load(plan.v2, 'dist/index.mjs');
  client = new Client({ name: 'approval-host', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } });
  elicitation = 'elicitation/create';
} else {
  ({ StdioClientTransport } = await load(plan.sdk, 'dist/esm/client/stdio.js'));
  const { Client } = await load(plan.sdk, 'dist/esm/client/index.js');
  ({ ElicitRequestSchema: elicitation } = await load(plan.sdk, 'dist/esm/types.js'));
  client = new Client({ name: 'approval-host', version: '1.0.0' }, { capabilities: { elicitation: {} } });
}
let answer = 'deny';
let asked = 0;
let ours = true;
client.setRequestHandler(elicitation, async (req) => {
  asked++;
  const p = req.params;
  ours &&= p.message.startsWith('mcpsandbox asks:') && p._meta?.['io.github.mcpsandbox/approval'] !== undefined;
  switch (answer) {
    case 'decline':
    case 'cancel':
      return { action: answer };
    case 'malformed':
      return { action: 'accept', content: { decision: 'perhaps' } };
    case 'never':
      return new Promise(() => {});
    default:
      return { action: 'accept', content: { decision: answer } };
  }
});
await client.connect(new StdioClientTransport({ command: plan.command, args: plan.args, env: process.env, stderr: 'inherit' }));
for (const step of plan.steps) {
  answer = step.answer;
  const before = asked;
  const out = { name: step.name };
  try {
    const res = await client.callTool({ name: plan.tool, arguments: step.arguments });
    out.text = (res.content ?? []).map((c) => c.text).join('\n');
  } catch (e) {
    out.code = e.code;
    out.data = e.data ?? null;
  }
  out.asked = asked - before;
  out.ours = ours;
  out.written = step.file ? fs.existsSync(step.file) : false;
  console.log(JSON.stringify(out));
}
await client.close();
