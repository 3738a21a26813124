package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/resolve"
)

func hostWith(dir string, env map[string]string) resolve.Resolution {
	return resolve.Resolution{Host: launch.Host{WorkDir: dir, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}}
}

// prepare of an npx line reaches the registry npm on this host is
// configured with, here by a project's .npmrc, and tells the sandboxed
// npm the same; a registry the policy sets wins.
func TestPrepareReachesNPMsRegistry(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("no npm on PATH")
	}
	t.Setenv("npm_config_registry", "")
	dir := t.TempDir()
	writeFile(t, dir, "package.json", `{"name": "proj"}`)
	writeFile(t, dir, ".npmrc", "registry=http://registry.example.test:4873/\n")
	p := policy.Default()
	hosts, env, err := prepareNetwork("npx", hostWith(dir, nil), p)
	if err != nil || !slices.Equal(hosts, []string{"registry.example.test:4873"}) || !slices.Equal(env, []string{"npm_config_registry=http://registry.example.test:4873/"}) {
		t.Errorf("with the project's .npmrc: hosts %q env %q (%v); want its registry alone", hosts, env, err)
	}
	p.Env = []string{"npm_config_registry=https://npm.example.test/"}
	if hosts, _, err := prepareNetwork("npx", hostWith(dir, nil), p); err != nil || !slices.Equal(hosts, []string{"npm.example.test:443"}) {
		t.Errorf("the policy's registry: hosts %q (%v)", hosts, err)
	}
	// npm reads its variables in any case: so does prepare.
	p.Env = []string{"NPM_CONFIG_REGISTRY=https://caps.example.test/"}
	if hosts, env, err := prepareNetwork("npx", hostWith(dir, nil), p); err != nil || !slices.Equal(hosts, []string{"caps.example.test:443"}) ||
		!slices.Equal(env, []string{"npm_config_registry=https://caps.example.test/"}) {
		t.Errorf("the policy's NPM_CONFIG_REGISTRY: hosts %q env %q (%v), want its registry", hosts, env, err)
	}
	p.Env = []string{"NPM_CONFIG_REGISTRY"}
	fromHost := hostWith(dir, map[string]string{"NPM_CONFIG_REGISTRY": "https://host.example.test:8443/"})
	if hosts, _, err := prepareNetwork("npx", fromHost, p); err != nil || !slices.Equal(hosts, []string{"host.example.test:8443"}) {
		t.Errorf("NPM_CONFIG_REGISTRY passed on from the host: hosts %q (%v), want its registry", hosts, err)
	}
	p.Env = []string{"npm_config_registry=registry.example.test"}
	if _, _, err := prepareNetwork("npx", hostWith(dir, nil), p); err == nil || !strings.Contains(err.Error(), "is no URL of a host") {
		t.Errorf("a registry that is no URL: %v", err)
	}
}

// prepare of a uvx line reaches PyPI's two hosts, or the indexes uv's
// variables name instead of it or beside it.
func TestPrepareReachesUVsIndex(t *testing.T) {
	p := policy.Default()
	for _, c := range []struct {
		env   map[string]string
		hosts []string
	}{
		{nil, []string{"pypi.org:443", "files.pythonhosted.org:443"}},
		{map[string]string{"UV_DEFAULT_INDEX": "https://pypi.example.test/simple"}, []string{"pypi.example.test:443"}},
		{map[string]string{"UV_INDEX": "internal=https://idx.example.test:8443/simple http://192.0.2.9/simple"},
			[]string{"pypi.org:443", "files.pythonhosted.org:443", "idx.example.test:8443", "192.0.2.9:80"}},
	} {
		hosts, env, err := prepareNetwork("uvx", hostWith(t.TempDir(), c.env), p)
		if err != nil || !slices.Equal(hosts, c.hosts) {
			t.Errorf("%v: hosts %q (%v), want %q", c.env, hosts, err, c.hosts)
		}
		for name, v := range c.env {
			if !slices.Contains(env, name+"="+v) {
				t.Errorf("%v: the sandboxed uv is not told %s (env %q)", c.env, name, env)
			}
		}
	}
}
