package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/mcpsandbox/mcpsandbox/internal/cmdline"
	"github.com/mcpsandbox/mcpsandbox/sandbox/seccomp"
)

// Stamped in by scripts/build.sh (which make build runs):
// -ldflags "-X main.version=... -X main.commit=...".
var (
	version = ""
	commit  = ""
)

type buildInfo struct {
	Version, Commit, Go, Platform, Libseccomp string
}

// currentBuild prefers the linker-set values and falls back to what the Go
// toolchain recorded (module version for `go install pkg@v1.2.3`, VCS
// revision when built inside a checkout with VCS stamping on).
func currentBuild() buildInfo {
	b := buildInfo{Version: version, Commit: commit, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = info.Main.Version
		}
		if b.Commit == "" {
			var rev, dirty string
			for _, s := range info.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					if s.Value == "true" {
						dirty = "-dirty"
					}
				}
			}
			if rev != "" {
				b.Commit = rev + dirty
			}
		}
	}
	if b.Version == "" {
		b.Version = "devel"
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	if v, ok := seccomp.LibVersion(); ok {
		b.Libseccomp = v
	} else {
		b.Libseccomp = "not available"
	}
	return b
}

func versionCommand(args []string, std stdio) int {
	fs := newFlagSet("version")
	if status, ok := parseFlags(fs, "version", args, std); !ok {
		return status
	}
	if status, ok := noArgs(fs, "version", std); !ok {
		return status
	}
	b := currentBuild()
	fmt.Fprintf(std.Out, "mcpsandbox %s\ncommit:     %s\ngo:         %s %s\nlibseccomp: %s\n",
		b.Version, b.Commit, b.Go, b.Platform, b.Libseccomp)
	return exitOK
}

func versionPage() *cmdline.Page {
	return &cmdline.Page{
		Name:     "mcpsandbox version - print version, commit and build details",
		Synopsis: []string{"mcpsandbox version", "mcpsandbox --version"},
		Description: []string{
			"Prints the mcpsandbox version, the source commit it was built from, the Go toolchain and platform, and the version of the libseccomp library linked in. Include this output in bug reports.",
			"Builds made with `make build` carry the version from `git describe` and the commit; `go install ...@VERSION` builds carry the module version.",
		},
		ExitStatus: []string{"0 on success; 2 when given an argument."},
		Examples: []cmdline.Example{
			{Command: "mcpsandbox version", Text: "Show what is installed:"},
		},
	}
}
