// Package policies holds the built-in policy files, which `run --policy
// NAME` and `extends: NAME` name. They are data, embedded so that the
// binary needs no file beside it.
package policies

import "embed"

// FS holds NAME.yaml for each built-in policy NAME.
//
//go:embed *.yaml
var FS embed.FS
