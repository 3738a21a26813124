package notify

import (
	"log/slog"
	"sync/atomic"
)

// Desktop notifies through Notify and logs its first failure at debug
// level, none after: a machine without a desktop fails every time, and a
// notification is never more than a courtesy.
type Desktop struct {
	Log    *slog.Logger
	logged atomic.Bool
}

// Notify shows summary and body, or logs once why it cannot.
func (d *Desktop) Notify(summary, body string) {
	if err := Notify(summary, body); err != nil && d.logged.CompareAndSwap(false, true) {
		d.Log.Debug("mcpsandbox: no desktop notification", "err", err)
	}
}
