// Command minrelay is the floor for any stdio relay: it starts its argv as a
// child and copies whole lines each way, doing nothing else. Benchmarks
// compare mcpsandbox against it.
package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
)

func main() {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	childIn, err := cmd.StdinPipe()
	if err != nil {
		panic(err)
	}
	childOut, err := cmd.StdoutPipe()
	if err != nil {
		panic(err)
	}
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	go func() {
		copyLines(childIn, os.Stdin)
		childIn.Close()
	}()
	copyLines(os.Stdout, childOut)
	cmd.Wait()
}

// copyLines writes each complete line with one Write, as a relay must.
func copyLines(dst io.Writer, src io.Reader) {
	r := bufio.NewReaderSize(src, 64<<10)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(line) > 0 {
			if _, werr := dst.Write(line); werr != nil {
				return
			}
		}
		line = line[:0]
		if err != nil {
			return
		}
	}
}
