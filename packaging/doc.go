// Package packaging holds what the .deb, the .rpm and install.sh put on a
// machine beside the binary (the systemd units, the AppArmor profile) and
// embeds it, so that `mcpsandbox service install` writes the very units the
// packages ship. It is a package of its own only because go:embed cannot
// reach files outside the embedding package's directory.
package packaging
