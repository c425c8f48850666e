//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package loader

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/internal/testenv"
)

// sparseWriter writes to a file, seeking over whole zero blocks so that
// they take no disk space.
type sparseWriter struct {
	f     *os.File
	zeros []byte
}

func (s sparseWriter) Write(b []byte) (int, error) {
	written := 0
	for len(b) > 0 {
		n := min(len(b), len(s.zeros))
		var err error
		if bytes.Equal(b[:n], s.zeros[:n]) {
			_, err = s.f.Seek(int64(n), io.SeekCurrent)
		} else {
			_, err = s.f.Write(b[:n])
		}
		if err != nil {
			return written, err
		}
		written += n
		b = b[n:]
	}
	return written, nil
}

// TestArchiveZip64Offsets writes a sparse archive whose first entry holds
// 5 GiB of zeros (from an anonymous mapping, so no memory is used), so
// that entry's sizes, the offsets of the entries after it, the central
// directory and the end record all need zip64 fields. A long suite: it
// computes the CRC-32 of 5 GiB.
func TestArchiveZip64Offsets(t *testing.T) {
	testenv.SkipLong(t)
	const big = 5 << 30
	zeros, err := syscall.Mmap(-1, 0, big, syscall.PROT_READ, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	require.NoError(t, err)
	defer syscall.Munmap(zeros)

	path := filepath.Join(t.TempDir(), "sparse.onnx")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	z := newZipWriter(sparseWriter{f, make([]byte, 1<<20)}, 0, nil)
	w := float32Bytes(1, 2, 3, 4)
	require.NoError(t, z.add("big", zeros, true))
	require.NoError(t, z.add("w", w, true))
	require.NoError(t, z.add(ArchiveModelEntry, smallArchiveModel(t, "w", 4), false))
	require.NoError(t, z.finish())

	m, err := Load(path)
	require.NoError(t, err)
	require.Equal(t, w, m.Graph.Initializers["w"].Data)
	require.NoError(t, m.Close())

	zr, err := zip.OpenReader(path)
	require.NoError(t, err)
	defer zr.Close()
	require.Len(t, zr.File, 3)
	require.Equal(t, uint64(big), zr.File[0].UncompressedSize64)
	for _, zf := range zr.File[:2] {
		off, err := zf.DataOffset()
		require.NoError(t, err)
		require.Zero(t, off%ArchiveAlignment, zf.Name)
	}
	off, err := zr.File[1].DataOffset()
	require.NoError(t, err)
	require.Greater(t, off, int64(max32))
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		testenv.Skip(t, "/usr/bin/python3 is not installed")
	}
	script := `import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
print(len(z.read("w")), z.namelist()[-1], z.getinfo("big").file_size)`
	out, err := exec.Command("/usr/bin/python3", "-c", script, path).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "16 __MODEL_PROTO 5368709120", strings.TrimSpace(string(out)))
}
