package loader

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

// closerFunc adapts a function to io.Closer.
type closerFunc func() error

// Close calls f.
func (f closerFunc) Close() error { return f() }

// externalData reads the external data of one model. Each file is opened
// (and, unless mapping is off, mapped whole, read-only) once and shared by
// every tensor stored in it.
type externalData struct {
	m           *graph.Model
	baseDir     string
	noMmap      bool
	noChecksums bool
	// realBase is baseDir, absolute with symbolic links resolved; it is
	// computed on first use.
	realBase string
	files    map[string]*extFile
	// archive, when the model comes from an ONNX zip archive, resolves
	// locations to its entries instead of files.
	archive *archive
}

// extFile is one opened external data file.
type extFile struct {
	size int64
	data []byte   // the whole file when mapped
	f    *os.File // the open file when not mapped
	// mapping, when data is a mapped file, records the tensors that use
	// data in place.
	mapping *graph.Mapping
}

func newExternalData(m *graph.Model, o options) *externalData {
	return &externalData{m: m, baseDir: o.baseDir, noMmap: o.noMmap, noChecksums: o.noChecksums, files: map[string]*extFile{}, archive: o.archive}
}

// finish closes the files that were read without mapping; mapped files stay
// mapped until the model is closed.
func (x *externalData) finish() {
	for _, ef := range x.files {
		if ef.f != nil {
			ef.f.Close()
		}
	}
}

// checkLocation refuses locations that could leave the model's folder
// lexically: empty, absolute, or with a ".." element (with either slash).
func checkLocation(loc string) error {
	switch {
	case loc == "":
		return errors.New("no location")
	case strings.ContainsRune(loc, 0):
		return fmt.Errorf("location %q contains a NUL byte", loc)
	case filepath.IsAbs(loc), strings.HasPrefix(loc, "/"), strings.HasPrefix(loc, `\`), filepath.VolumeName(loc) != "":
		return fmt.Errorf("location %q is an absolute path; it must be relative to the model's folder", loc)
	}
	for _, part := range strings.FieldsFunc(loc, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return fmt.Errorf("location %q leaves the model's folder", loc)
		}
	}
	return nil
}

// open returns the external file at loc, opening it on first use. It
// refuses locations that escape the base folder, symbolic links included.
func (x *externalData) open(loc string) (*extFile, error) {
	if err := checkLocation(loc); err != nil {
		return nil, err
	}
	key := filepath.Clean(filepath.FromSlash(loc))
	if ef, ok := x.files[key]; ok {
		return ef, nil
	}
	if x.baseDir == "" {
		return nil, fmt.Errorf("location %q: no base folder to read external data from (use loader.WithBaseDir)", loc)
	}
	if x.realBase == "" {
		abs, err := filepath.Abs(x.baseDir)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return nil, fmt.Errorf("base folder: %w", err)
		}
		x.realBase = abs
	}
	real, err := filepath.EvalSymlinks(filepath.Join(x.realBase, key))
	if err != nil {
		return nil, fmt.Errorf("location %q: %w", loc, err)
	}
	if rel, err := filepath.Rel(x.realBase, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("location %q resolves to %s, outside the model's folder", loc, real)
	}
	f, st, err := openRegular(real)
	if err != nil {
		return nil, fmt.Errorf("location %q: %w", loc, err)
	}
	ef := &extFile{size: st.Size()}
	if x.noMmap {
		ef.f = f
	} else {
		data, mapping, release, err := mapWeights(f, ef.size)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("location %q: %w", loc, err)
		}
		ef.data, ef.mapping = data, mapping
		x.m.AddCloser(closerFunc(release))
	}
	x.files[key] = ef
	x.m.ExternalFiles = append(x.m.ExternalFiles, filepath.ToSlash(key))
	return ef, nil
}

// externalInfo is a tensor's external_data entries.
type externalInfo struct {
	location, checksum string
	offset, length     int64
	hasLength          bool
}

func parseExternalInfo(entries []*onnxpb.StringStringEntryProto) (externalInfo, error) {
	var info externalInfo
	seen := map[string]bool{}
	for _, e := range entries {
		k, v := e.GetKey(), e.GetValue()
		if seen[k] {
			return info, fmt.Errorf("external_data key %q appears twice", k)
		}
		seen[k] = true
		var err error
		switch k {
		case "location":
			info.location = v
		case "checksum":
			info.checksum = v
		case "offset":
			info.offset, err = strconv.ParseInt(v, 10, 64)
		case "length":
			info.length, err = strconv.ParseInt(v, 10, 64)
			info.hasLength = true
		}
		if err != nil || info.offset < 0 || info.length < 0 {
			return info, fmt.Errorf("external_data %s %q is not a non-negative decimal integer", k, v)
		}
	}
	return info, nil
}

// tensorData returns the external bytes of tp, which must be size bytes
// long. Mapped bytes are used in place when 8-byte aligned; anything else
// is copied into memory the tensor owns.
func (x *externalData) tensorData(tp *onnxpb.TensorProto, size int64) ([]byte, error) {
	b, err := x.read(tp, size)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrExternalData, err)
	}
	return b, nil
}

func (x *externalData) read(tp *onnxpb.TensorProto, size int64) ([]byte, error) {
	info, err := parseExternalInfo(tp.ExternalData)
	if err != nil {
		return nil, err
	}
	var ef *extFile
	if x.archive != nil {
		ef, err = x.archive.entry(info, size, !x.noChecksums)
	} else {
		ef, err = x.open(info.location)
	}
	if err != nil {
		return nil, err
	}
	if info.hasLength && info.length != size {
		return nil, fmt.Errorf("length %d disagrees with the %d bytes of %s%v", info.length, size, graph.DType(tp.GetDataType()), tp.Dims)
	}
	if info.offset > ef.size || size > ef.size-info.offset {
		return nil, fmt.Errorf("bytes [%d, +%d) lie past the end of %q (%d bytes)", info.offset, size, info.location, ef.size)
	}
	var b []byte
	switch {
	case size == 0:
		b = []byte{}
	case ef.data != nil:
		b = ef.data[info.offset : info.offset+size : info.offset+size]
		if uintptr(unsafe.Pointer(&b[0]))%8 != 0 {
			c := graph.AllocBytes(size)
			copy(c, b)
			b = c
		} else if ef.mapping != nil {
			ef.mapping.AddTensor(tp.GetName(), b)
		}
	default:
		b = graph.AllocBytes(size)
		if n, err := ef.f.ReadAt(b, info.offset); n != len(b) {
			return nil, fmt.Errorf("reading %q: %w", info.location, err)
		}
	}
	if info.checksum != "" && !x.noChecksums {
		sum := sha1.Sum(b)
		if !strings.EqualFold(hex.EncodeToString(sum[:]), info.checksum) {
			return nil, fmt.Errorf("SHA-1 of %q bytes [%d, %d) is %x, checksum says %s", info.location, info.offset, info.offset+size, sum, info.checksum)
		}
	}
	return b, nil
}

// mapWeights maps the size bytes of f, whose tensors will use them in
// place, and registers the mapping (see graph.Mapping); release
// unregisters and unmaps it.
func mapWeights(f *os.File, size int64) (data []byte, mapping *graph.Mapping, release func() error, err error) {
	data, unmap, err := mapFile(f, size)
	if err != nil {
		return nil, nil, nil, err
	}
	if mappedHook != nil {
		mappedHook(f.Name())
	}
	mapping = graph.RegisterMapping(data, f.Name())
	return data, mapping, func() error {
		mapping.Unregister()
		return unmap()
	}, nil
}

// mappedHook, when set (by tests), is called with the name of each file
// just mapped, before anything reads it.
var mappedHook func(name string)

// readWhole returns the size bytes of the regular file f, mapped (and
// registered, see mapWeights) unless noMmap says to read them, and the
// function that releases them.
func readWhole(f *os.File, size int64, noMmap bool) ([]byte, func(), error) {
	if noMmap {
		data, err := readFile(f, size)
		return data, func() {}, err
	}
	data, _, release, err := mapWeights(f, size)
	if err != nil {
		return nil, nil, err
	}
	return data, func() { release() }, nil
}

// readFile reads the size bytes of the regular file f into memory.
func readFile(f *os.File, size int64) ([]byte, error) {
	data := make([]byte, size)
	if err := readAt(f, data, 0); err != nil {
		return nil, fmt.Errorf("reading %s: %w", f.Name(), err)
	}
	return data, nil
}

// openRegular opens path for reading and fails, with an error naming path,
// unless it is a regular file. It opens without blocking (O_NONBLOCK), so
// that a FIFO, which would block the open until a writer comes, fails at
// once instead.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = &fs.PathError{Op: "open", Path: path, Err: errors.New("not a regular file")}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}
