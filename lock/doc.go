// Package lock is the lock file: per server, the package it was prepared
// from and the contract it was approved with (plus what was seen and held
// until approval), in one human-readable, diff-friendly JSON file; and the
// tool calls held for a person on the deferred approval path (approvals.go),
// which the relay asks for and `mcpsandbox approve` grants from another
// process.
//
// It is a package of its own because the relay's pin rule, prepare, the pins
// commands and upgrade all read and write the same file, from several
// processes at once: the file's form, its checks (a hand edit that makes it
// inconsistent is refused at FILE:LINE:COL, never repaired) and its locking
// live here and nowhere else. It knows contracts only through package
// contract.
package lock
