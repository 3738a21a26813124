package lock

import (
	"encoding/json"
	"time"
)

// The lock's JSON form. Field order here is the order in the file; maps are
// written sorted by key. Text is stored as JSON, not as a string, so a diff
// of the file reads as a diff of the contract.
type fileJSON struct {
	Version   int                    `json:"version"`
	Servers   map[string]*serverJSON `json:"servers"`
	Approvals map[string]*Approval   `json:"approvals,omitempty"`
}

type serverJSON struct {
	Name     string        `json:"name,omitempty"`
	Mode     string        `json:"mode,omitempty"`
	Package  *packageJSON  `json:"package,omitempty"`
	Contract *contractJSON `json:"contract,omitempty"`
	Pending  *contractJSON `json:"pending,omitempty"`
}

type packageJSON struct {
	Name         string          `json:"name,omitempty"`
	Version      string          `json:"version,omitempty"`
	Integrity    string          `json:"integrity,omitempty"`
	Registry     string          `json:"registry,omitempty"`
	Published    time.Time       `json:"published,omitzero"`
	Provenance   *provenanceJSON `json:"provenance,omitempty"`
	MCPName      string          `json:"mcpName,omitempty"`
	InstallHosts []string        `json:"installHosts,omitempty"`
}

type provenanceJSON struct {
	Issuer     string `json:"issuer,omitempty"`
	Repository string `json:"repository,omitempty"`
	Workflow   string `json:"workflow,omitempty"`
	Commit     string `json:"commit,omitempty"`
}

type contractJSON struct {
	Tools             map[string]*entryJSON `json:"tools,omitempty"`
	Prompts           map[string]*entryJSON `json:"prompts,omitempty"`
	Resources         map[string]*entryJSON `json:"resources,omitempty"`
	ResourceTemplates map[string]*entryJSON `json:"resourceTemplates,omitempty"`
	Instructions      *entryJSON            `json:"instructions,omitempty"`
	ServerInfo        *entryJSON            `json:"serverInfo,omitempty"`
	Capabilities      *entryJSON            `json:"capabilities,omitempty"`
}

type entryJSON struct {
	Hash     string          `json:"hash"`
	Reason   string          `json:"reason,omitempty"`
	Findings []string        `json:"findings,omitempty"`
	Seen     time.Time       `json:"seen,omitzero"`
	Text     json.RawMessage `json:"text"`
}
