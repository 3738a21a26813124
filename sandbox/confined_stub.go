package sandbox

import (
	"errors"
	"log/slog"
)

// InitArg0 is argv[0] of the re-executed init stage.
const InitArg0 = "mcpsandbox-init"

// startConfined is replaced by the confinement implementation.
func startConfined(spec Spec, log *slog.Logger) (Process, error) {
	return nil, errors.New("sandbox: confinement is not built yet; use --unconfined")
}

// InitStage runs the init stage and never returns when this process was
// started as one; otherwise it returns at once.
func InitStage() {}
