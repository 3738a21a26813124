// Package pathrule holds the rules about paths that every layer must apply
// alike: when a path lies within a directory (a grant, /usr, a reserved
// tree such as /proc), and the PATH a server starts with.
//
// It is a package of its own because policy, launch, sandbox and the
// sandbox's init stage all apply these rules and may not import one
// another; copies of them drifted apart (on a trailing '/'). It imports
// nothing of the project.
package pathrule
