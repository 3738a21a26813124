//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// The bombs refuse to run unless seccomp and no_new_privs are on: a safety
// net against ever starting one outside the sandbox by mistake.
func requireConfined() error {
	st, err := procStatus()
	if err != nil {
		return fmt.Errorf("refusing: cannot tell whether I am confined: %v", err)
	}
	if st["Seccomp"] != "2" || st["NoNewPrivs"] != "1" {
		return errors.New("refusing: not running under a seccomp filter with no_new_privs; bombs only run confined")
	}
	return nil
}

// memBomb maps and touches memory in 64 MiB steps until the kernel kills
// the process; it never returns unless it is refused.
func memBomb() error {
	if err := requireConfined(); err != nil {
		return err
	}
	const step = 64 << 20
	var held [][]byte
	for {
		b, err := unix.Mmap(-1, 0, step, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			fmt.Fprintf(os.Stderr, "membomb: mmap failed after %d MiB: %v\n", len(held)*step>>20, err)
			os.Exit(4)
		}
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		held = append(held, b)
	}
}

// forkBomb starts children that stay alive until fork fails, then exits 1
// with the reason on stderr, leaving the children for the sandbox to reap.
func forkBomb() error {
	if err := requireConfined(); err != nil {
		return err
	}
	n := 0
	for {
		if _, err := startChild(modePause); err != nil {
			fmt.Fprintf(os.Stderr, "forkbomb: fork failed after %d children: %v\n", n, err)
			os.Exit(1)
		}
		n++
	}
}

// fillTmp writes /tmp until it is full, then exits 3 with ENOSPC on stderr.
func fillTmp() error {
	if err := requireConfined(); err != nil {
		return err
	}
	f, err := os.CreateTemp(os.TempDir(), "hostile-fill-")
	if err != nil {
		return err
	}
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i)
	}
	written := 0
	for {
		n, err := f.Write(chunk)
		written += n
		if err != nil {
			if errors.Is(err, unix.ENOSPC) {
				fmt.Fprintf(os.Stderr, "fill_tmp: %s is full after %d bytes: no space left on device (ENOSPC)\n", filepath.Dir(f.Name()), written)
				os.Exit(3)
			}
			fmt.Fprintf(os.Stderr, "fill_tmp: write %s after %d bytes: %v\n", f.Name(), written, err)
			os.Exit(5)
		}
	}
}

// pauseForever blocks until a signal kills the process.
func pauseForever() {
	for {
		unix.Pause()
	}
}
