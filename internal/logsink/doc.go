// Package logsink is where the daemon's own log goes: the systemd journal,
// one field per attribute, when the daemon runs as a systemd service, and a
// size-rotated text file elsewhere.
//
// It is its own package because choosing and feeding the system's log store
// (journal detection, field naming, rotation) is one concern the daemon only
// configures: the daemon logs through slog and never sees which sink is
// behind it.
package logsink
