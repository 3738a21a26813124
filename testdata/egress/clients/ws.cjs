// The ws package: open one WebSocket, send three messages one after the
// other over it, print each echo; exit 1 on any error or a wrong echo.
const WebSocket = require("ws");
const timeout = Number(process.env.MCPNET_TIMEOUT_SECONDS || 15) * 1000;
const ws = new WebSocket(process.argv[2], { handshakeTimeout: timeout });
const messages = ["ping-1", "ping-2", "ping-3"];
let next = 0;
const timer = setTimeout(() => fail(new Error(`not done within ${timeout} ms`)), timeout);
function fail(err) {
  console.error(`ws failed: ${err.code || ""} ${err.message}`);
  process.exitCode = 1;
  clearTimeout(timer);
  ws.terminate();
}
ws.on("open", () => ws.send(messages[next]));
ws.on("message", (data) => {
  const got = data.toString();
  if (got !== messages[next]) return fail(new Error(`echo ${JSON.stringify(got)}, want ${JSON.stringify(messages[next])}`));
  console.log(`echo: ${got}`);
  next++;
  if (next < messages.length) ws.send(messages[next]);
  else ws.close(1000);
});
ws.on("close", () => {
  clearTimeout(timer);
  if (next < messages.length && process.exitCode !== 1) fail(new Error(`closed after ${next} echoes`));
});
ws.on("error", fail);
