package main

import (
	"strings"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// inApproval says whether a policy key is shown under Approval rather than
// MCP rules: the keys of run's Approval flags (tiers, their timeout, the
// secret scan).
func inApproval(k policy.Key) bool {
	for _, rf := range runFlags {
		if rf.Field == k.Field {
			return rf.Group == "Approval"
		}
	}
	return false
}

// settingsWhere is settings of one section, only the keys keep takes.
func (e explanation) settingsWhere(section string, keep func(policy.Key) bool) []string {
	var lines []string
	for _, k := range policy.Keys() {
		if k.Section == section && keep(k) {
			lines = append(lines, e.setting(k.Name, e.value(k), e.source(k.Field))...)
		}
	}
	return lines
}

// approvalLines are the tiers and the secret scan, then what they mean for
// a call.
func (e explanation) approvalLines() []string {
	p := e.p
	lines := e.settingsWhere("mcp", inApproval)
	switch {
	case len(e.r.NoApprovalDropped) > 0:
		lines = append(lines, "no tool call waits for a person: no-approval drops the tiers",
			"  "+strings.Join(e.r.NoApprovalDropped, ", "))
	case len(p.ApproveTools) == 0 && len(p.ApproveAnnotated) == 0:
		lines = append(lines, "no tool call waits for a person")
	default:
		lines = append(lines,
			"a call of these tools waits for a person: asked through the host where",
			"it can ask (a 2026-07-28 input request, or elicitation/create), else",
			"refused at once with -31114 naming `mcpsandbox approve ID`; no answer",
			"within "+shortDuration(p.ApprovalTimeout)+" refuses it (docs/approval.md)")
	}
	if p.NoSecretScan {
		lines = append(lines, "arguments that look like secrets are passed on (no-secret-scan)")
	} else {
		lines = append(lines, "a call whose arguments carry a private key or a known token format is",
			"refused before the server sees it (-31116, naming the argument)")
	}
	return lines
}

// serverRequestLines are what becomes of the server's own requests to the
// host, and where a URL-mode elicitation may send the user.
func (e explanation) serverRequestLines() []string {
	p := e.p
	lines := e.settings("server-requests")
	if p.ServerElicitation != policy.ServerRequestAllow {
		return lines
	}
	if len(p.AllowHosts) == 0 {
		return append(lines, "a URL-mode elicitation is refused: no --allow-host names a host for it")
	}
	return append(lines, "a URL-mode elicitation only to: "+strings.Join(p.AllowHosts, ", "))
}
