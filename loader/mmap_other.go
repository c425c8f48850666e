//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package loader

import (
	"fmt"
	"io"
	"os"
)

// mapFile reads the first size bytes of f into memory: this platform gets no
// memory mapping, so the bytes are a private copy and release is a no-op.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	if int64(int(size)) != size {
		return nil, nil, fmt.Errorf("%s: %d bytes is too large to read", f.Name(), size)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	return data, func() error { return nil }, nil
}
