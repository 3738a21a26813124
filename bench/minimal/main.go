// Command minimal is the floor for any Go program's start: it writes one
// line to standard error first thing in main and exits. Benchmarks compare
// the mcpsandbox binary's own exec → main against it.
package main

import "os"

func main() {
	os.Stderr.WriteString("main\n")
}
