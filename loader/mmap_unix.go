//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package loader

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps the first size bytes of f read-only and returns them with the
// function that unmaps them. An empty file gives nil data.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	if size == 0 {
		return nil, func() error { return nil }, nil
	}
	if int64(int(size)) != size {
		return nil, nil, fmt.Errorf("%s: %d bytes is too large to map", f.Name(), size)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap %s: %w", f.Name(), err)
	}
	return data, func() error { return syscall.Munmap(data) }, nil
}
