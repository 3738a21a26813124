package notify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"
)

// ErrNoSessionBus is Notify's answer where DBUS_SESSION_BUS_ADDRESS is not
// set: a service, a container or an ssh session without a desktop.
var ErrNoSessionBus = errors.New("notify: no session bus (DBUS_SESSION_BUS_ADDRESS is not set)")

// timeout bounds a whole notification: connecting, authenticating and the
// Notify call. A desktop that does not answer by then is not waited for.
const timeout = 2 * time.Second

// maxBody bounds the body: it carries a server's tool name and masked
// arguments, which must not fill a person's screen.
const maxBody = 400

// The freedesktop.org Desktop Notifications service.
const (
	service = "org.freedesktop.Notifications"
	path    = dbus.ObjectPath("/org/freedesktop/Notifications")
	method  = service + ".Notify"
)

// Notify shows summary and body on the session bus that
// DBUS_SESSION_BUS_ADDRESS names, as application "mcpsandbox".
func Notify(summary, body string) error {
	addr := os.Getenv("DBUS_SESSION_BUS_ADDRESS")
	if addr == "" {
		return ErrNoSessionBus
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return notifyAt(ctx, addr, summary, body)
}

func notifyAt(ctx context.Context, addr, summary, body string) error {
	// EXTERNAL with the numeric uid: no user name lookup.
	conn, err := dbus.Connect(addr, dbus.WithContext(ctx), dbus.WithAuth(dbus.AuthExternal(strconv.Itoa(os.Getuid()))))
	if err != nil {
		return fmt.Errorf("notify: session bus %s: %w", addr, err)
	}
	defer conn.Close()
	hints := map[string]dbus.Variant{"urgency": dbus.MakeVariant(byte(1))} // normal
	call := conn.Object(service, path).CallWithContext(ctx, method, 0,
		"mcpsandbox", uint32(0), "", cut(summary), plain(body), []string{}, hints, int32(-1))
	if call.Err != nil {
		return fmt.Errorf("notify: %s: %w", method, call.Err)
	}
	return nil
}

// plain is a body a notification server shows as written: servers that
// read markup in the body (<b>, <a href>) would otherwise render what an
// MCP server put in its tool name or arguments. (The summary is plain text
// by the specification.)
func plain(body string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(cut(body))
}

// cut bounds s to maxBody characters.
func cut(s string) string {
	if r := []rune(s); len(r) > maxBody {
		return string(r[:maxBody-1]) + "…"
	}
	return s
}
