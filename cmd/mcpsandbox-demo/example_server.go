package main

import (
	"context"
	"fmt"

	"github.com/mcpsandbox/mcpsandbox/demo"
	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
)

var exampleServerUsage = cmdline.Usage{Name: "mcpsandbox-demo example-server", Manual: "mcpsandbox-demo example-server --help", Page: exampleServerPage}

func exampleServerCommand(args []string, std cmdline.Stdio) int {
	fs := exampleServerUsage.FlagSet()
	if status, ok := exampleServerUsage.Parse(fs, args, std); !ok {
		return status
	}
	if status, ok := exampleServerUsage.NoArgs(fs, std); !ok {
		return status
	}
	if err := demo.ServeExample(context.Background(), std.In, std.Out); err != nil {
		fmt.Fprintf(std.Err, "example-server: %v\n", err)
		return cmdline.ExitFailure
	}
	return cmdline.ExitOK
}

func exampleServerPage() *cmdline.Page {
	return &cmdline.Page{
		Name:     "mcpsandbox-demo example-server - the bundled example MCP server",
		Synopsis: []string{"mcpsandbox-demo example-server"},
		Description: []string{
			"Serves MCP on standard input and output with tools that misbehave on request: echo, big, sleep, crash, hang, garbage, instance, roots, log, touch, and probe (reports what the server can see of its confinement). `mcpsandbox-demo` runs it behind the supervisor `mcpsandbox run` uses; you can put it behind `mcpsandbox run` too, to try mcpsandbox with any host:",
			"  mcpsandbox run -- mcpsandbox-demo example-server",
		},
		ExitStatus: []string{"0 when standard input ends; the crash tool exits with the code it is given."},
		Examples:   []cmdline.Example{{Command: "mcpsandbox run --ping-interval 1s -- mcpsandbox-demo example-server", Text: "Put it behind the supervisor, for a host to talk to:"}},
	}
}
