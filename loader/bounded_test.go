package loader

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// bombZip returns an archive whose deflated __MODEL_PROTO inflates to n
// zero bytes while the directory states that it holds stated bytes.
func bombZip(t testing.TB, n, stated int) []byte {
	zeros := make([]byte, n)
	var c bytes.Buffer
	fw, err := flate.NewWriter(&c, flate.BestSpeed)
	require.NoError(t, err)
	_, err = fw.Write(zeros)
	require.NoError(t, err)
	require.NoError(t, fw.Close())
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: ArchiveModelEntry, Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(zeros),
		CompressedSize64: uint64(c.Len()), UncompressedSize64: uint64(stated)})
	require.NoError(t, err)
	_, err = w.Write(c.Bytes())
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestArchiveInflationBounded: a deflated __MODEL_PROTO is inflated into
// one buffer of the size the directory states, which must be within the
// limit and within deflate's 1032:1 ratio; inflating to more or fewer
// bytes fails.
func TestArchiveInflationBounded(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name      string
		n, stated int
		opts      []Option
		want      string
		maxAlloc  uint64
	}{
		{"stated size past the limit", 1 * mib, 48 * mib, []Option{WithModelSizeLimit(16 * mib)}, "__MODEL_PROTO: 50331648 bytes, past the limit of 16777216", mib},
		{"stated size past protobuf's limit", 1 * mib, 3 << 30, nil, "past protobuf's 2 GiB limit", mib},
		{"stated size past deflate's ratio", 1 << 10, 1 << 30, nil, "cannot inflate to 1073741824 bytes", mib},
		{"inflates to the stated size", 8 * mib, 8 * mib, nil, "protobuf", 9 * mib},
		{"inflates past the stated size", 8 * mib, 1 * mib, nil, "inflates past the 1048576 bytes the directory states", 2 * mib},
		{"inflates short of the stated size", 1 * mib, 1*mib + 1000, nil, "inflates to 1048576 bytes, not the 1049576 the directory states", 2 * mib},
	}
	for _, tt := range tests {
		b := bombZip(t, tt.n, tt.stated)
		var err error
		got := allocated(func() { _, err = loadArchiveBytes(b, tt.opts...) })
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one saying %q", tt.name, err, tt.want)
		}
		if got > tt.maxAlloc {
			t.Errorf("%s: allocated %d bytes, want at most %d", tt.name, got, tt.maxAlloc)
		}
	}
}

// TestLoadRegularFilesOnly: Load reads only regular files, of at most the
// model size limit, and says which path it refuses.
func TestLoadRegularFilesOnly(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.onnx")
	require.NoError(t, os.WriteFile(big, make([]byte, 2<<20), 0o644))
	for _, tt := range []struct {
		path string
		opts []Option
		want string
	}{
		{dir, nil, "not a regular file"},
		{big, []Option{WithModelSizeLimit(1 << 20)}, "2097152 bytes, past the limit of 1048576"},
	} {
		for _, opts := range [][]Option{tt.opts, append(tt.opts, WithoutMmap())} {
			m, err := Load(tt.path, opts...)
			if err == nil {
				m.Close()
				t.Errorf("%s: loaded", tt.path)
				continue
			}
			if msg := err.Error(); !strings.Contains(msg, tt.path) || !strings.Contains(msg, tt.want) {
				t.Errorf("%s: error %q: want one naming the path and saying %q", tt.path, msg, tt.want)
			}
		}
	}
	_, err := ReadValueFile(dir, nil)
	require.ErrorContains(t, err, dir+": not a regular file")
}
