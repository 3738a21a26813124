package sandbox

import (
	"os"
	"testing"
)

// A root supervisor's server owns its files through its dynamic uid, so a
// change to how the network is represented must not move a none or host
// server to another uid. The golden keys and uids below were computed from
// the code before Network existed (commit 3e11eac, Spec.NetHost false and
// true) by a throwaway test running this same Spec through newInitConfig
// and identityKey; the uid is the one a fresh registry leases (leased there
// too for the host variant).
func TestIdentityPinnedForNoneAndHost(t *testing.T) {
	cases := []struct {
		net     Network
		key     string
		freeUID uint32
	}{
		{NetNone, "1aed2c7fe086a03fef9d067089c90afd94aa881075d581022d412cb21a17012b", 1915543423},
		{NetHost, "1ace500ca88fdfc7ffec43f4380b6bc747cf6ba1af237df6a950da7ee6afc4e0", 1913520908},
	}
	for _, c := range cases {
		spec := Spec{
			Name:     "pinned",
			Args:     []string{"/bin/sh", "-c", "exec node dist/index.js"},
			ReadOnly: []string{"/usr/lib/node_modules", "/srv/app"},
			Env:      []string{"API_URL=https://example.com", "LOG=1"},
			Dir:      "/srv/app",
			TmpSize:  8 << 20,
			NoFile:   256,
			Seccomp:  "default",
			Net:      c.net,
		}
		cfg, err := newInitConfig(spec)
		if err != nil {
			t.Fatal(err)
		}
		// Where /bin/sh leads differs between hosts; the pin was made where
		// it leads to /usr/bin/dash (Debian).
		cfg.Exe = "/usr/bin/dash"
		key := identityKey(cfg, spec)
		if key.String() != c.key {
			t.Errorf("net %s: key %s, want %s: servers keyed before would lose the uid that owns their files", c.net, key, c.key)
		}
		if uid := DynamicIDFirst + key.preferred(); uid != c.freeUID {
			t.Errorf("net %s: a fresh registry would lease uid %d, want %d", c.net, uid, c.freeUID)
		}
		if os.Geteuid() != 0 {
			continue // the registry must be root's
		}
		identityUseRegistry(t)
		if uid, err := leaseDynamicID(key, spec.Name); err != nil || uid != c.freeUID {
			t.Errorf("net %s: leased uid %d (%v), want %d", c.net, uid, err, c.freeUID)
		}
	}
}
