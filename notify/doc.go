// Package notify shows a desktop notification on the user's session bus
// (org.freedesktop.Notifications), so that a person learns at once that a
// tool call waits for `mcpsandbox approve`.
//
// It is a package of its own because it is the one place mcpsandbox talks
// to a desktop: the approval rule decides when to notify and knows nothing
// of D-Bus, and this knows nothing of approvals. A notification is only
// ever a courtesy: no bus, no notification service or a slow one is an
// error for the caller to log, never a reason to refuse or delay a call.
package notify
