// The TypeScript SDK client's half of the error-code tests
// (cmd/mcpsandbox/codes_tsclient_test.go runs it): for each session of the
// plan it spawns mcpsandbox with StdioClientTransport, takes each case's
// step as codes_goclient_test.go does, and prints one JSON line per case:
// the error's code, message and data, and the next call on the session.
//
//   node client.mjs PLAN_JSON
//
// PLAN_JSON: {"sdk": dir of @modelcontextprotocol/sdk, "sessions":
// [{"name", "command", "args", "dir" (the stand-in's gates), "maxMessage",
// "maxCalls", "cases": [names]}]}.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const plan = JSON.parse(process.argv[2]);
const sdk = (file) => import(pathToFileURL(path.join(plan.sdk, 'dist', 'esm', file)).href);
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');

const RESTART_GATE = 'restart-gate'; // codes_standin_test.go's restartGate

async function call(client, name, args, options) {
  const res = await client.callTool({ name, arguments: args ?? {} }, undefined, options);
  const text = (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  if (res.isError) throw new Error(`error result: ${text}`);
  return text;
}

// outcome reads the JSON-RPC error a call should have been answered with.
async function outcome(promise) {
  try {
    const text = await promise;
    return { error: `answered ${JSON.stringify(text.slice(0, 80))}` };
  } catch (e) {
    return errorOf(e);
  }
}

// errorOf: McpError's message is "MCP error CODE: " + the one on the wire.
function errorOf(e) {
  if (typeof e?.code !== 'number') return { error: `not a JSON-RPC error: ${e?.stack ?? e}` };
  const prefix = `MCP error ${e.code}: `;
  const message = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
  return { code: e.code, message, data: e.data ?? null };
}

async function after(client) {
  try {
    const text = await call(client, 'echo', { text: 'after' });
    return text === 'after' ? { ok: true } : { error: `echo answered ${JSON.stringify(text.slice(0, 80))}` };
  } catch (e) {
    const o = errorOf(e);
    return o.error ? { error: o.error } : { code: o.code, message: o.message };
  }
}

// releaseGate writes n bytes to a FIFO gate of the stand-in. The open
// blocks until its reader has it open, as the Go test's does.
function releaseGate(s, gate, n) {
  const fd = fs.openSync(path.join(s.dir, gate), fs.constants.O_WRONLY);
  try {
    fs.writeSync(fd, Buffer.alloc(n));
  } finally {
    fs.closeSync(fd);
  }
}

const settle = (p, i) => p.then((text) => ({ i, text }), (err) => ({ i, err }));

// queueFull: see goCodes.queueFull.
async function queueFull(client, s) {
  const crash = await outcome(call(client, 'crash', { code: 3, holdRestart: true }));
  if (crash.error) return { error: `the crash that starts the restart: ${crash.error}` };
  const text = 'q'.repeat(Math.floor((s.maxMessage * 2) / 5));
  const calls = [0, 1, 2].map((i) => settle(call(client, 'echo', { text }), i));
  const first = await Promise.race(calls);
  const o = 'err' in first ? errorOf(first.err) : { error: `answered ${JSON.stringify(first.text.slice(0, 80))}` };
  releaseGate(s, RESTART_GATE, 1);
  for (const r of await Promise.all(calls.filter((_, i) => i !== first.i))) {
    if ('err' in r || r.text !== text) return { error: `a call held for the restart got ${r.err ?? JSON.stringify(r.text.slice(0, 80))}` };
  }
  return o;
}

// tooManyCalls: see goCodes.tooManyCalls.
async function tooManyCalls(client, s) {
  const n = s.maxCalls;
  let holding = 0;
  let allHold;
  const held = new Promise((resolve) => (allHold = resolve));
  const onprogress = () => ++holding === n && allHold();
  const holds = Array.from({ length: n }, (_, i) => settle(call(client, 'hold', { gate: 'calls' }, { onprogress }), i));
  const early = await Promise.race([held.then(() => null), ...holds]);
  if (early) return { error: `a held call ended before the others held: ${early.err ?? early.text}` };
  const o = await outcome(call(client, 'echo', { text: 'one too many' }));
  releaseGate(s, 'calls', n);
  for (const r of await Promise.all(holds)) {
    if ('err' in r || r.text !== 'released') return { error: `a held call got ${r.err ?? JSON.stringify(r.text)}` };
  }
  return o;
}

const steps = {
  crashed: (c) => outcome(call(c, 'crash', { code: 3 })),
  stopped: (c) => outcome(call(c, 'crash', { code: 3 })),
  'too-large-response': (c, s) => outcome(call(c, 'big', { bytes: 2 * s.maxMessage })),
  'too-large-request': (c, s) => outcome(call(c, 'echo', { text: 'x'.repeat(2 * s.maxMessage) })),
  'invalid-utf8': (c) => outcome(call(c, 'invalid', { how: 'utf8' })),
  'invalid-deep': (c) => outcome(call(c, 'invalid', { how: 'deep' })),
  denied: (c) => outcome(call(c, 'forbidden')),
  timeout: (c) => outcome(call(c, 'hold', { gate: 'timeout' })),
  'rate-limited': async (c) => {
    try {
      await call(c, 'limited');
    } catch (e) {
      return { error: `the first call, within the limit: ${e.message}` };
    }
    return outcome(call(c, 'limited'));
  },
  'queue-full': queueFull,
  'too-many-calls': tooManyCalls,
};

for (const s of plan.sessions) {
  const transport = new StdioClientTransport({ command: s.command, args: s.args, env: process.env, stderr: 'inherit' });
  const client = new Client({ name: 'codes-test-ts', version: '1' }, { capabilities: {} });
  await client.connect(transport);
  for (const name of s.cases) {
    const step = steps[name];
    const o = step ? await step(client, s) : { error: `client.mjs has no step for case ${name}` };
    if (!o.error) o.after = await after(client);
    console.log(JSON.stringify({ case: name, ...o }));
  }
  await client.close();
}
