// Command mcpsandbox runs third-party stdio MCP servers confined and supervised.
package main

import "github.com/mcpsandbox/mcpsandbox/sandbox"

func main() {
	sandbox.InitStage()
}
