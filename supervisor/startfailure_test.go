package supervisor

import "testing"

// Each pattern recognises the line its runtime printed confined here, and
// takes the path (or URL) from it.
func TestStderrPatternsMatchTheirSamples(t *testing.T) {
	for i := range stderrPatterns {
		p := &stderrPatterns[i]
		found := findCauses([]string{"unrelated line", p.sample, "Node.js v20.20.2"})
		if len(found) == 0 || found[0].pattern != p {
			t.Errorf("%s: sample %q not recognised as its own (%v)", p.name, p.sample, found)
			continue
		}
		if path := found[0].path; path == "" || (path[0] != '/' && p.kind != causeOffline && p.kind != causeEnv) {
			t.Errorf("%s: took %q from %q", p.name, path, p.sample)
		}
	}
	// npx with the network gone, not only with --offline (a real line too).
	if found := findCauses([]string{"npm error request to https://registry.npmjs.org/cowsay failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org"}); len(found) != 1 || found[0].pattern.kind != causeOffline || found[0].path != "https://registry.npmjs.org/cowsay" {
		t.Errorf("npm's failed download: %v", found)
	}
	if found := findCauses([]string{"ModuleNotFoundError: No module named 'mcp'"}); len(found) != 0 {
		t.Errorf("a message naming no path was taken for one: %v", found)
	}
}
