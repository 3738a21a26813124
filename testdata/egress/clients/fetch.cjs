// Node's global fetch (undici): GET the URL, print the body, exit 1 unless 2xx.
const timeout = Number(process.env.MCPNET_TIMEOUT_SECONDS || 15) * 1000;
fetch(process.argv[2], { signal: AbortSignal.timeout(timeout) })
  .then(async (res) => {
    process.stdout.write(await res.text());
    process.exitCode = res.ok ? 0 : 1;
  })
  .catch((err) => {
    // undici hides the system error (ENOTFOUND, ECONNREFUSED) in cause.
    console.error(`fetch failed: ${err.message}${err.cause ? `: ${err.cause.code || ""} ${err.cause.message}` : ""}`);
    process.exitCode = 1;
  });
