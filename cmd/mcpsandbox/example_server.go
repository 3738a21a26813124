package main

import (
	"context"
	"fmt"

	"github.com/mcpsandbox/mcpsandbox/demo"
)

func exampleServerCommand(args []string, std stdio) int {
	fs := newFlagSet("example-server")
	if status, ok := parseFlags(fs, "example-server", args, std); !ok {
		return status
	}
	if status, ok := noArgs(fs, "example-server", std); !ok {
		return status
	}
	if err := demo.ServeExample(context.Background(), std.In, std.Out); err != nil {
		fmt.Fprintf(std.Err, "example-server: %v\n", err)
		return exitFailure
	}
	return exitOK
}

func exampleServerPage() *manPage {
	return &manPage{
		Name:     "mcpsandbox example-server - the bundled example MCP server",
		Synopsis: []string{"mcpsandbox example-server"},
		Description: []string{
			"Serves MCP on standard input and output with tools that misbehave on request: echo, big, sleep, crash, hang, garbage, instance, roots, log, touch, and probe (reports what the server can see of its confinement). `mcpsandbox demo` runs it under `mcpsandbox run`; you can too, to try mcpsandbox with any host:",
			"  mcpsandbox run -- mcpsandbox example-server",
		},
		ExitStatus: []string{"0 when standard input ends; the crash tool exits with the code it is given."},
		Examples:   []example{{"mcpsandbox run --ping-interval 1s -- mcpsandbox example-server", "Put it behind the supervisor, for a host to talk to:"}},
	}
}
