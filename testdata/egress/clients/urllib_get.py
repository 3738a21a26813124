"""Python's urllib: GET the URL, print the body, exit 1 on any error or a non-2xx status."""
import os
import ssl
import sys
import urllib.request

timeout = float(os.environ.get("MCPNET_TIMEOUT_SECONDS", "15"))
context = ssl.create_default_context(cafile=os.environ.get("SSL_CERT_FILE"))
try:
    with urllib.request.urlopen(sys.argv[1], timeout=timeout, context=context) as res:
        sys.stdout.write(res.read().decode())
except Exception as err:  # the error's class says what failed: URLError, HTTPError, TimeoutError
    print(f"urllib failed: {type(err).__name__}: {err}", file=sys.stderr)
    sys.exit(1)
