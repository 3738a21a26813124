package sandbox

// PLACEHOLDER owned by the sandbox-core work: replaced by the init stage.

import (
	"errors"
	"log/slog"
)

// InitArg0 is argv[0] of the re-executed init stage.
const InitArg0 = "mcpsandbox-init"

func startConfined(spec Spec, log *slog.Logger) (Process, error) {
	return nil, errors.New("sandbox: confinement is not built yet; use --unconfined")
}

// InitStage runs the init stage and never returns when this process was
// started as one; otherwise it returns at once.
func InitStage() {}
