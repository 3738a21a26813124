package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// helperEnv, set, makes the test binary the second process of
// TestTwoProcessesShareOneFileThroughRotation: it runs the workload the
// variable holds instead of the tests.
const helperEnv = "MCPSANDBOX_AUDIT_TEST_WORKLOAD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(helperEnv); spec != "" {
		os.Exit(helperProcess(spec))
	}
	os.Exit(m.Run())
}

// workload is what one process writes: Writers Logs (a relay's worth
// each), each Lines lines, every line naming (Proc, writer, seq).
type workload struct {
	Path    string
	Proc    string
	Writers int
	Lines   int
	MaxSize int64
	Keep    int
}

// open opens the workload's Logs; the queue holds every line of the
// process, so none can be dropped whatever the file's pace.
func (w workload) open() ([]*Log, error) {
	var logs []*Log
	for i := range w.Writers {
		l, err := Open(Config{Path: w.Path, MaxSize: w.MaxSize, Keep: w.Keep, Queue: w.Writers * w.Lines,
			Server: w.Proc + "-" + strconv.Itoa(i)})
		if err != nil {
			return nil, err
		}
		logs = append(logs, l)
	}
	return logs, nil
}

// run writes every line once start is closed, each Log from a goroutine
// of its own, then closes the Logs, and returns how many lines were lost.
func (w workload) run(logs []*Log, start <-chan struct{}) int {
	var wg sync.WaitGroup
	pad := strings.Repeat("x", 120)
	for i, l := range logs {
		wg.Go(func() {
			<-start
			for seq := range w.Lines {
				p := fmt.Appendf(nil, `{"name":"write","arguments":{"proc":%q,"writer":%d,"seq":%d,"pad":%q}}`, w.Proc, i, seq, pad)
				l.Begin("tools/call", p, len(p)).EndAnswer(Answer{Bytes: seq})
			}
		})
	}
	wg.Wait()
	lost := 0
	for _, l := range logs {
		lost += l.Lost()
		l.Close()
	}
	return lost
}

// helperProcess opens the workload, says "ready", waits for a line on
// stdin, writes, and reports the lines it lost.
func helperProcess(spec string) int {
	var w workload
	if err := json.Unmarshal([]byte(spec), &w); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	logs, err := w.open()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println("ready")
	start := make(chan struct{})
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	close(start)
	fmt.Println("lost", w.run(logs, start))
	return 0
}

// Two processes, each with several relays' Logs of one file, write
// together through many rotations: every line is found once, whole, in the
// file or a rotated one, each Log's lines in order; no file is past the
// size, and each rotated file was full (it was rotated once, not once per
// process).
func TestTwoProcessesShareOneFileThroughRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	base := workload{Path: path, Writers: 4, Lines: 150, MaxSize: 4096, Keep: 400}

	child := base
	child.Proc = "p2"
	spec, _ := json.Marshal(child)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+string(spec))
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	if l, err := out.ReadString('\n'); l != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the second process said %q (%v)", l, err)
	}

	own := base
	own.Proc = "p1"
	logs, err := own.open()
	if err != nil {
		t.Fatal(err)
	}
	start := make(chan struct{})
	io.WriteString(stdin, "go\n")
	close(start)
	lost := own.run(logs, start)
	rest, _ := io.ReadAll(out)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the second process: %v", err)
	}
	if lost != 0 || strings.TrimSpace(string(rest)) != "lost 0" {
		t.Fatalf("lines lost to a full queue: %d here, %q there; the test must lose none", lost, rest)
	}

	files := []string{path}
	for n := 1; ; n++ {
		p := path + "." + strconv.Itoa(n)
		if _, err := os.Stat(p); err != nil {
			break
		}
		files = append(files, p)
	}
	if len(files) > base.Keep {
		t.Fatalf("%d files: the oldest were rotated out; raise Keep", len(files))
	}
	if len(files) < 20 {
		t.Errorf("only %d files: the test should go through many rotations", len(files))
	}
	type key struct {
		proc   string
		writer int
	}
	next := map[key]int{}
	longest, turns, last := 0, 0, ""
	for i := len(files) - 1; i >= 0; i-- { // oldest first
		data, err := os.ReadFile(files[i])
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(data)) > base.MaxSize {
			t.Errorf("%s is %d bytes, over the rotation size %d", filepath.Base(files[i]), len(data), base.MaxSize)
		}
		if len(data) > 0 && data[len(data)-1] != '\n' {
			t.Errorf("%s ends in a partial line", filepath.Base(files[i]))
		}
		for _, line := range bytes.SplitAfter(data, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			longest = max(longest, len(line))
			var rec struct {
				Arguments struct {
					Proc   string
					Writer int
					Seq    int
				}
			}
			if err := json.Unmarshal(line, &rec); err != nil || rec.Arguments.Proc == "" {
				t.Fatalf("%s: a line torn or not ours (%v): %q", filepath.Base(files[i]), err, line)
			}
			if rec.Arguments.Proc != last {
				turns, last = turns+1, rec.Arguments.Proc
			}
			k := key{rec.Arguments.Proc, rec.Arguments.Writer}
			if rec.Arguments.Seq != next[k] {
				t.Fatalf("%s: %s writer %d line %d follows line %d: a line lost, duplicated or out of order",
					filepath.Base(files[i]), k.proc, k.writer, rec.Arguments.Seq, next[k]-1)
			}
			next[k]++
		}
	}
	for _, proc := range []string{"p1", "p2"} {
		for w := range base.Writers {
			if n := next[key{proc, w}]; n != base.Lines {
				t.Errorf("%s writer %d: %d lines found, want %d", proc, w, n, base.Lines)
			}
		}
	}
	t.Logf("%d files; the processes took turns %d times", len(files), turns)
	// A file is rotated when a line does not fit, so every rotated file
	// is within a line of full; a second rotation of a file just begun
	// would leave one nearly empty.
	for _, f := range files[1:] {
		fi, _ := os.Stat(f)
		if fi.Size()+int64(longest) <= base.MaxSize {
			t.Errorf("%s was rotated at %d bytes, with room for any line (the longest is %d bytes): rotated twice",
				filepath.Base(f), fi.Size(), longest)
		}
	}
}
