package main

import "github.com/mcpsandbox/mcpsandbox/internal/cmdline"

func approvePage() *cmdline.Page {
	return &cmdline.Page{
		Name: "mcpsandbox approve - let through a tool call that waits for a person",
		Synopsis: []string{
			"mcpsandbox approve [OPTIONS] ID",
			"mcpsandbox approve --list [OPTIONS]",
		},
		Description: []string{
			"A tool under an approval tier (approve-tools, approve-annotated in the policy; the built-in policies set tiers for the reference servers' writing tools) waits for a person. When the host cannot ask one (it declares no elicitation), the call is refused at once with the error -31114, whose message and data.approvalId name an ID: run `mcpsandbox approve ID`, then let the host call the tool again. docs/approval.md shows each way of asking.",
			"approve ID grants that one call: it prints the server, the tool, the arguments (masked, as the audit log writes them) and when the approval expires. The approval is bound to the arguments' digest and is used up by one call: the host's next call of the tool with the same arguments goes through, a call with other arguments is refused with a new ID. An ID that is unknown, used or expired is an error (status 1) that says what to do.",
			"--list prints every call that waits (and every approval not used yet) with its ID, server, tool, masked arguments and expiry.",
			"The approvals are kept in the lock (docs/pins.md) that the server's relay uses; the options choose it as `pins` does.",
		},
		Options: []cmdline.Option{
			{Flag: "--list", Text: "Print the calls that wait for approval instead of approving one."},
			{Flag: "--lock FILE", Text: "The lock the server's relay uses. Default: the one the options below choose, else $MCPSANDBOX_LOCK (an absolute path, as run reads it), else your lock, ~/.config/mcpsandbox/lock.json ($XDG_CONFIG_HOME's when set; root's /etc/mcpsandbox/lock.json)."},
			{Flag: "--policy FILE|NAME", Text: "The lock that policy's pins.lock names, as `run --policy` would use."},
			{Flag: "--config FILE", Text: "The lock of the daemon config FILE: beside it, with .lock.json for .json (daemon.json's is daemon.lock.json)."},
			helpOption,
		},
		ExitStatus: []string{
			"0 on success.",
			"1 when the ID is unknown, used or expired, or the lock does not load or cannot be written.",
			"2 on a wrong command line.",
		},
		Examples: []cmdline.Example{
			{Command: "mcpsandbox approve --list", Text: "See which calls wait for you:"},
			{Command: "mcpsandbox approve k3v7qd2mxa", Text: "Let one through, then have the host call the tool again:"},
		},
	}
}
