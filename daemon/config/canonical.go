package config

import (
	"encoding/json"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// canonical sets s.Raw: every setting of the entry that the daemon acts
// on, with the users it falls back to, in a fixed encoding. Where the
// entry is in the file is left out: moving it changes nothing.
func (s *Server) canonical(fallback []User) error {
	users := s.Users
	if len(users) == 0 {
		users = fallback
	}
	var over policy.Policy
	for _, f := range s.Given {
		copyField(&over, &s.Overrides, f)
	}
	lim := s.Limits
	lim.At = policy.Pos{}
	strip := func(items []Item) []string {
		var out []string
		for _, it := range items {
			out = append(out, it.Value)
		}
		return out
	}
	raw, err := json.Marshal(struct {
		Name                       string
		Command                    []string
		Cwd, Policy                string
		Overrides                  policy.Policy
		Given                      []string
		Prestart, MaxInstances     int
		Users                      []string
		Disabled, Sandboxed        bool
		Writable, Reachable        []string
		DenyRead, DenyWrite, Unset []string
	}{s.Name, s.Command, s.Cwd, s.Policy, over, s.Given, s.Prestart, s.MaxInstances, userStrings(users), s.Disabled, lim.Sandboxed,
		strip(lim.Writable), strip(lim.Reachable), strip(lim.DenyRead), strip(lim.DenyWrite), strip(lim.Unset)})
	s.Raw = raw
	return err
}

func userStrings(users []User) []string {
	var out []string
	for _, u := range users {
		out = append(out, u.String())
	}
	return out
}
