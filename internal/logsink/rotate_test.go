package logsink

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// openFile opens a file sink at dir/logs/daemon.log (the directory not yet there).
func openFile(t *testing.T, o Options, stderr *bytes.Buffer) (*slog.Logger, string, func() error) {
	t.Helper()
	if o.File == "" {
		o.File = filepath.Join(t.TempDir(), "logs", "daemon.log")
	}
	h, where, closeLog, err := open(o, stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeLog() })
	return slog.New(h), where, closeLog
}

var seqRe = regexp.MustCompile(`msg=record seq=(\d+) `)

// seqs reads the record numbers in file, in order, checking every line is
// a whole record.
func seqs(t *testing.T, file string) []int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for line := range strings.Lines(string(data)) {
		m := seqRe.FindStringSubmatch(line)
		if m == nil || !strings.HasSuffix(line, "pad="+pad+"\n") {
			t.Fatalf("%s holds a line that is not a whole record: %q", file, line)
		}
		n, _ := strconv.Atoi(m[1])
		got = append(got, n)
	}
	return got
}

var pad = strings.Repeat("p", 100)

func logRecords(log *slog.Logger, from, to int) {
	for i := from; i < to; i++ {
		log.Info("record", "seq", i, "pad", pad)
	}
}

func TestRotationKeepsEveryRecord(t *testing.T) {
	const maxSize = 4096
	var stderr bytes.Buffer
	log, file, closeLog := openFile(t, Options{MaxSize: maxSize, Keep: 10}, &stderr)
	const n = 120 // about 180 bytes each: four rotations
	logRecords(log, 0, n)
	closeLog()

	var all []int
	for i := 10; i >= 1; i-- {
		name := fmt.Sprintf("%s.%d", file, i)
		if _, err := os.Stat(name); os.IsNotExist(err) {
			continue
		}
		all = append(all, checkRotated(t, name, maxSize)...)
	}
	all = append(all, seqs(t, file)...)
	want := make([]int, n)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(all, want) {
		t.Errorf("the rotated files and the log hold records %v, want 0 to %d once each, in order", all, n-1)
	}
	if matches, _ := filepath.Glob(file + ".*"); len(matches) < 4 {
		t.Errorf("%d records of ~180 bytes at %d bytes a file made only %v", n, maxSize, matches)
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
}

// checkRotated reads a rotated file's records: it must be full up to a record.
func checkRotated(t *testing.T, name string, maxSize int64) []int {
	t.Helper()
	st, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > maxSize || st.Size() < maxSize-300 {
		t.Errorf("%s has %d bytes, want at most %d and within a record of it", name, st.Size(), maxSize)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", name, st.Mode().Perm())
	}
	return seqs(t, name)
}

func TestRotationKeepsKeepFiles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "daemon.log")
	// Left by an earlier run that kept more.
	for _, old := range []string{"daemon.log.3", "daemon.log.9", "daemon.log.other"} {
		os.WriteFile(filepath.Join(dir, old), []byte("old\n"), 0o600)
	}
	log, _, closeLog := openFile(t, Options{File: file, MaxSize: 2048, Keep: 2}, new(bytes.Buffer))
	logRecords(log, 0, 100) // ~8 rotations
	closeLog()

	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"daemon.log", "daemon.log.1", "daemon.log.2", "daemon.log.other"}
	if !slices.Equal(names, want) {
		t.Fatalf("after 8 rotations with Keep 2 the directory holds %v, want %v", names, want)
	}
	// The newest records, consecutive across the files, the last one last.
	kept := append(append(seqs(t, file+".2"), seqs(t, file+".1")...), seqs(t, file)...)
	for i, s := range kept {
		if s != 100-len(kept)+i {
			t.Fatalf("the kept files hold records %v, want the last %d consecutive up to 99", kept, len(kept))
		}
	}
}

func TestReopenAppends(t *testing.T) {
	file := filepath.Join(t.TempDir(), "daemon.log")
	o := Options{File: file, MaxSize: 4096, Keep: 3}
	log, _, closeLog := openFile(t, o, new(bytes.Buffer))
	logRecords(log, 0, 15) // ~2700 bytes: no rotation yet
	closeLog()
	log, _, closeLog = openFile(t, o, new(bytes.Buffer))
	logRecords(log, 15, 30) // past 4096 counted with what was there
	closeLog()

	first, second := seqs(t, file+".1"), seqs(t, file)
	if len(first) == 0 || first[0] != 0 || second[len(second)-1] != 29 || first[len(first)-1]+1 != second[0] {
		t.Errorf("reopened log: %v then %v; want 0… in the rotated file, continued to 29 in the new one", first, second)
	}
	checkRotated(t, file+".1", 4096)
}

func TestRecordLargerThanMaxSize(t *testing.T) {
	file := filepath.Join(t.TempDir(), "daemon.log")
	log, _, closeLog := openFile(t, Options{File: file, MaxSize: 1024, Keep: 3}, new(bytes.Buffer))
	log.Info("small")
	log.Info("big", "blob", strings.Repeat("b", 3000))
	log.Info("after")
	closeLog()
	for name, want := range map[string]string{file + ".2": "msg=small", file + ".1": "msg=big", file: "msg=after"} {
		data, err := os.ReadFile(name)
		if err != nil || strings.Count(string(data), "\n") != 1 || !strings.Contains(string(data), want) {
			t.Errorf("%s: %q (%v), want the one record %s", name, data, err, want)
		}
	}
}

func TestRotationFailureKeepsWriting(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "daemon.log")
	// A directory where the rotated file would go: the rename fails.
	if err := os.MkdirAll(filepath.Join(dir, "daemon.log.1", "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	log, _, closeLog := openFile(t, Options{File: file, MaxSize: 1024, Keep: 1}, &stderr)
	logRecords(log, 0, 20)
	closeLog()
	got := seqs(t, file)
	if len(got) != 20 {
		t.Errorf("with rotation failing, the log holds records %v, want all 20", got)
	}
	if n := strings.Count(stderr.String(), "rotating the log "+file); n != 1 {
		t.Errorf("stderr tells of the failed rotation %d times, want once:\n%s", n, stderr.String())
	}
}

func TestFileAndDirectoryModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "mcpsandbox")
	file := filepath.Join(dir, "daemon.log")
	_, where, _ := openFile(t, Options{File: file}, new(bytes.Buffer))
	if where != file {
		t.Errorf("where = %q, want %q", where, file)
	}
	for name, want := range map[string]os.FileMode{dir: 0o700, filepath.Dir(dir): 0o700, file: 0o600} {
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", name, st.Mode().Perm(), want)
		}
	}
}

func TestRelativeFileIsMadeAbsolute(t *testing.T) {
	t.Chdir(t.TempDir())
	_, where, _ := openFile(t, Options{File: "daemon.log"}, new(bytes.Buffer))
	if !filepath.IsAbs(where) || filepath.Base(where) != "daemon.log" {
		t.Errorf("where = %q, want the absolute path of daemon.log", where)
	}
}
