package initstage

import (
	"strings"
	"testing"
)

// C strings end at NUL: a value with one inside would reach the server cut
// short, so the configuration refuses it instead.
func TestConfigMessageRefusesNULBytes(t *testing.T) {
	for _, edit := range []func(*Config){
		func(c *Config) { c.Args = append(c.Args, "a\x00b") },
		func(c *Config) { c.Env = append(c.Env, "TOKEN=sec\x00ret") },
		func(c *Config) { c.Dir = "/srv\x00/app" },
		func(c *Config) { c.Binds = []Bind{{Path: "/srv/data\x00/../../etc", Writable: true}} },
		func(c *Config) { c.Tmpfs = []string{"/var/cache\x00/../../etc"} },
		func(c *Config) { c.MaskedSockets = []string{"/srv/data\x00/agent.sock"} },
	} {
		cfg := testConfig(t, "/bin/true")
		edit(cfg)
		if _, err := cfg.Encode(); err == nil || !strings.Contains(err.Error(), "NUL") {
			t.Errorf("Encode of %q %q %q: %v, want a NUL error", cfg.Args, cfg.Env, cfg.Dir, err)
		}
	}
}
