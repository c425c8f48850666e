// Package hostmem tells how much memory the process may use: the
// machine's, its cgroup's, and what an address space limit leaves.
package hostmem

import (
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Physical is the memory the process may use: the machine's RAM
// (sysinfo), or its cgroup's memory.max, or what its address space limit
// (RLIMIT_AS, RLIMIT_DATA: prlimit --as) leaves beside what the process
// maps already, where that is smaller; 0 when none is known.
func Physical() int64 {
	var si syscall.Sysinfo_t
	var n int64
	if syscall.Sysinfo(&si) == nil {
		n = int64(si.Totalram) * int64(si.Unit)
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if m, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && m > 0 && (n == 0 || m < n) {
			n = m
		}
	}
	if free, ok := AddressSpaceLeft(); ok && (n == 0 || free < n) {
		n = max(free, 1)
	}
	return n
}

// AddressSpaceLeft is what the process's address space limits (RLIMIT_AS
// against VmSize, RLIMIT_DATA against VmData) leave now, the smaller of
// the two; ok is false when neither is set. The Go heap keeps the address
// space it maps, so this only shrinks while the process lives.
func AddressSpaceLeft() (left int64, ok bool) {
	for _, l := range []struct {
		res  int
		used string
	}{{syscall.RLIMIT_AS, "VmSize:"}, {syscall.RLIMIT_DATA, "VmData:"}} {
		var lim syscall.Rlimit
		if syscall.Getrlimit(l.res, &lim) != nil || lim.Cur == ^uint64(0) || lim.Cur > math.MaxInt64 {
			continue
		}
		if free := int64(lim.Cur) - procStatusBytes(l.used); !ok || free < left {
			left, ok = free, true
		}
	}
	return left, ok
}

// procStatusBytes is the size /proc/self/status gives for key (VmSize:,
// VmData:, in kB): the address space the process (its runtime, code,
// thread stacks, heap) already takes of a limit; 0 when unknown.
func procStatusBytes(key string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, key); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}
