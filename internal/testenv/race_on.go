//go:build race

package testenv

// raceEnabled: the race detector slows everything two to ten times.
const raceEnabled = true
