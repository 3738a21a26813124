module github.com/mcpsandbox/mcpsandbox

go 1.26.8

require (
	github.com/containerd/cgroups/v3 v3.1.3 // indirect
	github.com/kardianos/service v1.3.0 // indirect
	github.com/moby/sys/userns v0.1.0 // indirect
	github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
	github.com/seccomp/libseccomp-golang v0.11.1 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
