package sandbox

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
)

// describeUID stands for the dynamic uid (and gid) a server would lease:
// Describe leases none. Only whether a uid is dynamic, and that it owns
// none of the grants, matters to the plan.
const describeUID = DynamicIDFirst + DynamicIDCount - 1

// describeGrantOwners plans the grants of cfg as Start will for a root
// supervisor's dynamic uid (planBindOwners): each idmapped grant's Mount
// says whose files the server is shown as its own.
func describeGrantOwners(spec Spec, cfg *initConfig, d *Description) {
	if os.Geteuid() != 0 || spec.User != "" {
		return // the server keeps the host's permissions
	}
	plan := *cfg
	plan.UID, plan.GID, plan.UserNS = describeUID, describeUID, false
	plan.Binds = nil
	for _, b := range cfg.Binds {
		if !b.State { // the state directory is the server's own
			plan.Binds = append(plan.Binds, b)
		}
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if planBindOwners(&plan, spec.Seccomp == "default" && !spec.SeccompLog, quiet) != nil {
		return // grantsUsable puts the refusal among d's Problems
	}
	for _, b := range plan.Binds {
		if b.IDMap == nil {
			continue
		}
		for i := range d.Mounts {
			if m := &d.Mounts[i]; m.Kind == Grant && m.Path == b.Path {
				m.What = describeIDMap(*b.IDMap)
			}
		}
	}
}

func describeIDMap(m initstage.IDMap) string {
	if m.UID == 0 {
		return fmt.Sprintf("root's, lent to the server (idmapped): root is shown as its uid, and what it writes lands as root's (group %d)", m.GID)
	}
	return fmt.Sprintf("idmapped: its owner %d:%d is shown as the server's uid, and what it writes lands as the owner's", m.UID, m.GID)
}

// unnameStandIn words err, planned for describeUID, for the uid the start
// will lease: Describe and CheckGrants lease none, so they name none.
func unnameStandIn(err error, uid uint32) error {
	var fe *field.Error
	if errors.As(err, &fe) {
		placeholder := "uid " + strconv.FormatUint(uint64(uid), 10)
		fe.Problem = strings.ReplaceAll(fe.Problem, placeholder, "its dynamic uid")
		fe.Fix = strings.ReplaceAll(fe.Fix, placeholder, "its dynamic uid")
	}
	return err
}
