package launch

import "github.com/mcpsandbox/mcpsandbox/policy"

// BuiltinMatches is policy.Matches of the built-in policies, written out
// (builtin_matches.go) so that a start chooses its policy without parsing
// twenty YAML files, about a millisecond; TestBuiltinMatchesAreCurrent
// keeps the table and the files one.
func BuiltinMatches() []policy.Match { return builtinMatches }
