package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
)

// newLogger returns the supervisor's structured log: slog text on stderr,
// or appended to path when one is given.
func newLogger(path, level string, stderr io.Writer) (*slog.Logger, func(), error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	w, closeFn := stderr, func() {}
	if path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("--log-file: %v (choose a writable path, or leave it out to log to standard error)", err)
		}
		w, closeFn = f, func() { f.Close() }
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lv})), closeFn, nil
}
