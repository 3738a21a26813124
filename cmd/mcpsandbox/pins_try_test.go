package main

import "testing"

func TestPinsTry(t *testing.T) {
	writeMemoryLock(t, "/tmp/pinstry/lock.json")
}
