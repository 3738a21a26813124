package pins

import (
	"os"
	"time"

	"github.com/mcpsandbox/mcpsandbox/lock"
)

// reloadIfChanged reads the lock again when it changed on disk (a `pins
// approve` of another process): one stat, and a read only then.
func (r *Rule) reloadIfChanged() {
	st := stampOf(r.o.Path)
	if st == r.stamp {
		return
	}
	f, err := lock.Load(r.o.Path)
	if err != nil {
		r.o.Log.Warn("the lock changed and cannot be read; the approvals read before stay in force", "lock", r.o.Path, "error", err)
		r.stamp = st
		return
	}
	r.take(f, st)
	for name, h := range r.held {
		if it, ok := r.approved.Get(h.kind, h.key); ok && it.Hash == h.hash {
			delete(r.held, name)
			r.o.Log.Info("held item approved in the lock; released", "item", name, "lock", r.o.Path)
		}
	}
}

// fileStamp tells whether a file changed since it was read.
type fileStamp struct {
	mtime time.Time
	size  int64
	ok    bool
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{mtime: fi.ModTime(), size: fi.Size(), ok: true}
}
