package main

import (
	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/sandbox"
)

// confinementProblem names the parts of the default confinement this
// machine cannot enforce, with their fixes (settings named by setting, the
// demo's demo.Setting); nil when it can enforce all.
func confinementProblem(setting field.Namer) error { return sandbox.Doctor().Problem(setting) }
