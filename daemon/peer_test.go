package daemon_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/daemon"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

// otherUID is a uid no one on the test machine has.
const otherUID = 4242

// A client of a uid the server does not allow is refused and told which
// uid, which server and which key would let it in; one the server's users
// name gets an instance. Control is refused to it.
func TestPeerCheckRefusesOtherUIDs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running a client as another uid needs root")
	}
	requireConfinement(t)
	d := startDaemon(t, configOf(
		tokenEntry(t, "mine", ""),
		tokenEntry(t, "shared", `, "users": [4242]`),
		tokenEntry(t, "anyone", `, "users": ["*"]`),
		tokenEntry(t, "named", `, "users": ["nobody"]`),
	))
	// The test binary as the client, as uid 4242 (go test's build
	// directory is private to root).
	cmd := exec.Command(testenv.SelfForOthers(t), roleConnectClient, d.socket, "mine", "shared", "nosuch", "control:status", "anyone", "named")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: otherUID, Gid: otherUID}}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("client as uid %d: %v\n%s", otherUID, err, out)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var answers []daemon.Refusal
	for dec.More() {
		var r struct {
			daemon.Refusal
			OK bool `json:"ok"`
		}
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		if r.OK {
			r.Kind = "ok"
		}
		answers = append(answers, r.Refusal)
	}
	if len(answers) != 6 {
		t.Fatalf("answers %+v", answers)
	}
	mine := answers[0]
	if mine.Kind != daemon.RefusedPeer || mine.Code != supervisor.CodeServerUnavailable {
		t.Errorf("uid %d connecting to mine: %+v", otherUID, mine)
	}
	for _, want := range []string{"uid 4242", `"mine"`, "users", d.config + ":2:", "the daemon's own user only"} {
		if !strings.Contains(mine.Reason, want) {
			t.Errorf("refusal %q does not say %q", mine.Reason, want)
		}
	}
	if answers[1].Kind != "ok" {
		t.Errorf("uid %d connecting to shared, whose users name it: %+v", otherUID, answers[1])
	}
	if answers[2].Kind != daemon.RefusedNoServer || !strings.Contains(answers[2].Reason, "mine, shared") {
		t.Errorf("connecting to a server the config lacks: %+v", answers[2])
	}
	if c := answers[3]; c.Kind != daemon.RefusedPeer || !strings.Contains(c.Reason, "uid 4242 may not control this daemon") {
		t.Errorf("status as uid %d: %+v", otherUID, c)
	}
	if answers[4].Kind != "ok" {
		t.Errorf(`uid %d connecting to a server of users ["*"]: %+v`, otherUID, answers[4])
	}
	if n := answers[5]; n.Kind != daemon.RefusedPeer || !strings.Contains(n.Reason, "whose users are nobody") {
		t.Errorf(`uid %d connecting to a server of users ["nobody"]: %+v`, otherUID, n)
	}
}
