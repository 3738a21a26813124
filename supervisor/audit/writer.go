package audit

import (
	"path/filepath"
	"sync"
	"time"
)

// The writers of this process, one per file, shared by every Log that
// names it: two writers of one file in one process would each rotate it.
var writers struct {
	mu     sync.Mutex
	byPath map[string]*writer
}

// maxBatch bounds the lines written under one taking of the file's lock,
// so another process waiting for it is not kept out for long.
const maxBatch = 64

// closeTimeout bounds the wait for the file at the end: a hung file system
// (or a process holding the lock) must not hold mcpsandbox's exit.
const closeTimeout = 2 * time.Second

// writer owns one audit file and the goroutine that writes it.
type writer struct {
	key   string // its key in writers.byPath
	refs  int    // Logs using it; writers.mu guards it
	file  *file
	queue chan entry
	done  chan struct{} // closed when the goroutine has ended

	failing bool // the last write failed; only the goroutine uses it
}

// entry is one line for the file, or (line nil, done set) a Log's last word:
// done is closed once every line it queued before is written.
type entry struct {
	log  *Log
	line []byte
	done chan struct{}
}

// acquire returns the process's writer of path, opening the file when no
// Log holds it yet. The first opener's max, keep and queue settings hold
// until the last Log closes.
func acquire(path string, max int64, keep, queue int) (w *writer, narrowed bool, err error) {
	key, err := filepath.Abs(path)
	if err != nil {
		return nil, false, err
	}
	writers.mu.Lock()
	defer writers.mu.Unlock()
	if w := writers.byPath[key]; w != nil {
		w.refs++
		return w, false, nil
	}
	f, narrowed, err := openFile(path, max, keep)
	if err != nil {
		return nil, false, err
	}
	w = &writer{key: key, refs: 1, file: f, queue: make(chan entry, queue), done: make(chan struct{})}
	if writers.byPath == nil {
		writers.byPath = map[string]*writer{}
	}
	writers.byPath[key] = w
	go w.run()
	return w, narrowed, nil
}

// release drops a Log's hold; the last one ends the goroutine (everything
// queued is written by then: each Log waited for its own lines) and closes
// the file. A Log opening the path afterwards gets a new writer.
func (w *writer) release() {
	writers.mu.Lock()
	w.refs--
	last := w.refs == 0
	if last {
		delete(writers.byPath, w.key)
		close(w.queue) // no Log can send any more: all have closed
	}
	writers.mu.Unlock()
	if !last {
		return
	}
	t := time.NewTimer(closeTimeout)
	defer t.Stop()
	select {
	case <-w.done:
		w.file.close()
	case <-t.C: // the goroutine is stuck in the file system: leave it the file
	}
}

// run is the writer goroutine: it writes what is queued in batches.
func (w *writer) run() {
	defer close(w.done)
	batch := make([]entry, 0, maxBatch)
	for e := range w.queue {
		batch = append(batch[:0], e)
	more:
		for len(batch) < maxBatch {
			select {
			case e, ok := <-w.queue:
				if !ok {
					break more
				}
				batch = append(batch, e)
			default:
				break more
			}
		}
		w.write(batch)
	}
}

func (w *writer) write(batch []entry) {
	var lines [][]byte
	for _, e := range batch {
		if e.line != nil {
			lines = append(lines, e.line)
		}
		if n := e.log.dropped.Swap(0); n > 0 {
			lines = append(lines, e.log.droppedLine(int(n)))
			e.log.log.Warn("audit lines dropped: the audit log did not keep up", "dropped", n)
		}
	}
	err := w.file.write(lines)
	log := batch[0].log.log
	switch {
	case err != nil && !w.failing:
		log.Warn("writing the audit log failed; later lines are tried again", "error", err)
	case err == nil && w.failing:
		log.Info("writing the audit log works again")
	}
	w.failing = err != nil
	for _, e := range batch {
		if e.done != nil {
			close(e.done)
		}
	}
}
