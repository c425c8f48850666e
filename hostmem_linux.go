package onnxvk

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// physicalMemory is the memory the process may use: the machine's RAM
// (sysinfo), or its cgroup's memory.max where that is smaller; 0 when
// neither is known.
func physicalMemory() int64 {
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
	return n
}
