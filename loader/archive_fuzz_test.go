package loader

import (
	"archive/zip"
	"bytes"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// FuzzArchive feeds arbitrary bytes to LoadReaderAt as an archive. It must
// never panic, and an archive that loads must survive SaveArchive and load
// again with the same graph.
func FuzzArchive(f *testing.F) {
	w := float32Bytes(1, 2, 3, 4)
	model := smallArchiveModel(f, "w", 4)
	f.Add(alignedZip(f, zipTestEntry{"w", w, 0}, zipTestEntry{ArchiveModelEntry, model, 0}))
	f.Add(alignedZip(f, zipTestEntry{"w", w, 0}, zipTestEntry{"v", w, 0}, zipTestEntry{ArchiveModelEntry, smallArchiveModel(f, "v", 2, 2), 0}))
	f.Add(writeZip(f, zipTestEntry{"w", w, 0}, zipTestEntry{ArchiveModelEntry, model, zip.Deflate}))
	var rich bytes.Buffer
	if err := writeArchive(&rich, archiveModel(f)); err != nil {
		f.Fatal(err)
	}
	f.Add(rich.Bytes())
	f.Add(bombZip(f, 64<<10, 1<<10))
	f.Add(bombZip(f, 1<<10, 64<<10))
	tampered := alignedZip(f, zipTestEntry{"w", w, 0}, zipTestEntry{ArchiveModelEntry, model, 0})
	tampered[bytes.Index(tampered, w)] ^= 1
	f.Add(tampered)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, opts := range [][]Option{nil, {WithUnalignedArchive()}, {WithoutChecksums(), WithModelSizeLimit(1 << 16)}} {
			m, err := LoadReaderAt(bytes.NewReader(b), int64(len(b)), "fuzz.onnx", opts...)
			if err != nil {
				continue
			}
			var again bytes.Buffer
			err = writeArchive(&again, m)
			if err == nil {
				var m2 *graph.Model
				m2, err = LoadReaderAt(bytes.NewReader(again.Bytes()), int64(again.Len()), "again.onnx")
				if err == nil {
					err = m2.Close()
				}
			}
			if cerr := m.Close(); cerr != nil {
				t.Fatal(cerr)
			}
			if err != nil {
				t.Fatalf("a loaded archive does not survive writeArchive and loading again: %v", err)
			}
		}
	})
}
