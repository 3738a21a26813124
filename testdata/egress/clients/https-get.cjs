// Node's http.get / https.get by the URL's scheme: print the body, exit 1 unless 2xx.
const url = new URL(process.argv[2]);
const get = url.protocol === "https:" ? require("https").get : require("http").get;
const timeout = Number(process.env.MCPNET_TIMEOUT_SECONDS || 15) * 1000;
process.exitCode = 1; // until a 2xx answer ends: Node exiting with nothing left to run is a failure
const req = get(url, { timeout }, (res) => {
  res.setEncoding("utf8");
  res.on("data", (chunk) => process.stdout.write(chunk));
  res.on("end", () => {
    process.exitCode = res.statusCode >= 200 && res.statusCode < 300 ? 0 : 1;
  });
});
req.on("timeout", () => req.destroy(new Error(`no answer within ${timeout} ms`)));
req.on("error", (err) => {
  console.error(`${url.protocol.slice(0, -1)}.get failed: ${err.code || ""} ${err.message}`);
  process.exitCode = 1;
});
