//go:build !linux

// Package hostmem tells how much memory the process may use: the
// machine's, its cgroup's, and what an address space limit leaves.
package hostmem

// Physical is unknown here: 0.
func Physical() int64 { return 0 }

// AddressSpaceLeft is unknown here: ok is false.
func AddressSpaceLeft() (left int64, ok bool) { return 0, false }
