# Each target is a thin wrapper over scripts/, which also work without make.
FUZZTIME ?= 30s

.PHONY: build test demo bench fuzz setup package clean

build:
	./scripts/build.sh

test:
	./scripts/test.sh

demo:
	./scripts/demo.sh

bench: build
	./bench/run.sh

fuzz:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

setup:
	./scripts/test-setup.sh

package:
	./scripts/package.sh

clean:
	rm -rf mcpsandbox mcpsandbox-demo mcpsandbox-provenance dist
