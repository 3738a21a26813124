// Node's global fetch (undici): GET the URL, print the body, exit 1 unless 2xx.
const timeout = Number(process.env.MCPNET_TIMEOUT_SECONDS || 15) * 1000;
// A fetch whose socket is reset can leave its promise pending with nothing
// left to run: Node then exits on its own, which must count as a failure.
process.exitCode = 1;
process.on("beforeExit", () => {
  if (!settled) console.error("fetch failed: the request ended with no answer and no error");
});
let settled = false;
fetch(process.argv[2], { signal: AbortSignal.timeout(timeout) })
  .then(async (res) => {
    process.stdout.write(await res.text());
    settled = true;
    process.exitCode = res.ok ? 0 : 1;
  })
  .catch((err) => {
    settled = true;
    // undici hides the system error (ENOTFOUND, ECONNREFUSED) in cause.
    console.error(`fetch failed: ${err.message}${err.cause ? `: ${err.cause.code || ""} ${err.cause.message}` : ""}`);
    process.exitCode = 1;
  });
