package supervisor

import "github.com/mcpsandbox/mcpsandbox/supervisor/mcprules"

// WithRules chains rules inside the policy's and the pins' rules, as a
// rule of mcpsandbox's own would be: the tests' rules at the seam.
func WithRules(rules mcprules.Rules) func(*Options) {
	return func(o *Options) { o.rules = rules }
}
