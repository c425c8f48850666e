package loader

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

// ArchiveInlineLimit is the size under which SaveArchive keeps a tensor's
// bytes inside the ModelProto instead of giving it a data entry.
const ArchiveInlineLimit = 1024

// DOS date and time written for every entry (1980-01-01 00:00), so that
// saving the same model twice gives the same bytes.
const (
	dosDate = 1<<5 | 1
	dosTime = 0
)

// SaveArchive writes m to path as an ONNX zip archive: every tensor of at
// least ArchiveInlineLimit bytes (strings excepted) in its own stored data
// entry whose first byte is 64-byte aligned, named after the tensor as a C
// identifier unique ignoring case, then the ModelProto in the last entry,
// __MODEL_PROTO, with zip64 records when the archive needs them. The file is
// written under a temporary name and renamed into place, so a model whose
// weights are mapped from the file being replaced stays valid.
func SaveArchive(m *graph.Model, path string) error {
	if err := saveArchive(m, path); err != nil {
		return fmt.Errorf("loader: save archive %q: %w", path, err)
	}
	return nil
}

func saveArchive(m *graph.Model, path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".onnxvk-archive-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := writeArchive(f, m); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// writeArchive writes m to w as an ONNX archive starting at offset 0.
func writeArchive(w io.Writer, m *graph.Model) error {
	mp, err := ToProto(m)
	if err != nil {
		return err
	}
	var data [][]byte
	names := newEntryNames()
	walkTensors(mp, func(tp *onnxpb.TensorProto) {
		if len(tp.RawData) < ArchiveInlineLimit {
			return
		}
		name := names.add(tp.GetName())
		data = append(data, tp.RawData)
		setExternal(tp, name, -1, -1)
	})
	model, err := marshalProto(mp, m.Name)
	if err != nil {
		return err
	}
	z := newZipWriter(w, 0, nil)
	for i, b := range data {
		if err := z.add(names.list[i], b, true); err != nil {
			return fmt.Errorf("entry %q: %w", names.list[i], err)
		}
	}
	if err := z.add(ArchiveModelEntry, model, false); err != nil {
		return fmt.Errorf("entry %s: %w", ArchiveModelEntry, err)
	}
	return z.finish()
}

// setExternal makes tp reference bytes of the archive entry name: the whole
// entry when offset is negative, else length bytes from offset.
func setExternal(tp *onnxpb.TensorProto, name string, offset, length int64) {
	loc := onnxpb.TensorProto_EXTERNAL
	tp.RawData = nil
	tp.DataLocation = &loc
	tp.ExternalData = []*onnxpb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String(name)}}
	if offset >= 0 {
		tp.ExternalData = append(tp.ExternalData,
			&onnxpb.StringStringEntryProto{Key: proto.String("offset"), Value: proto.String(strconv.FormatInt(offset, 10))},
			&onnxpb.StringStringEntryProto{Key: proto.String("length"), Value: proto.String(strconv.FormatInt(length, 10))})
	}
}

// entryNames hands out archive entry names: C identifiers, unique ignoring
// case, never __MODEL_PROTO.
type entryNames struct {
	list  []string
	taken map[string]bool // lower-case names
	// next is, for each lower-case base name, the first suffix to try.
	next map[string]int
}

func newEntryNames() *entryNames {
	return &entryNames{taken: map[string]bool{strings.ToLower(ArchiveModelEntry): true}, next: map[string]int{}}
}

// maxEntryName bounds the length of generated entry names.
const maxEntryName = 200

// add derives an entry name from a tensor name: characters outside
// [A-Za-z0-9_] become '_', a leading digit gets a '_' before it, an empty
// name becomes "tensor", and a name already taken gets a numeric suffix.
func (n *entryNames) add(tensor string) string {
	var b strings.Builder
	for i := 0; i < len(tensor) && b.Len() < maxEntryName; i++ {
		c := tensor[i]
		switch {
		case c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9':
			if b.Len() == 0 {
				b.WriteByte('_')
			}
		default:
			c = '_'
		}
		b.WriteByte(c)
	}
	base := b.String()
	if base == "" {
		base = "tensor"
	}
	name, key := base, strings.ToLower(base)
	for n.taken[strings.ToLower(name)] {
		i := max(n.next[key], 2)
		n.next[key] = i + 1
		name = base + "_" + strconv.Itoa(i)
	}
	n.taken[strings.ToLower(name)] = true
	n.list = append(n.list, name)
	return name
}

// walkTensors calls fn for every tensor of mp: initializers, sparse
// initializers and tensors in node attributes, in nested graphs and
// functions too.
func walkTensors(mp *onnxpb.ModelProto, fn func(*onnxpb.TensorProto)) {
	var graphProto func(*onnxpb.GraphProto)
	sparse := func(sp *onnxpb.SparseTensorProto) {
		if sp.Values != nil {
			fn(sp.Values)
		}
		if sp.Indices != nil {
			fn(sp.Indices)
		}
	}
	nodes := func(ns []*onnxpb.NodeProto) {
		for _, np := range ns {
			for _, ap := range np.Attribute {
				if ap.T != nil {
					fn(ap.T)
				}
				for _, t := range ap.Tensors {
					fn(t)
				}
				if ap.SparseTensor != nil {
					sparse(ap.SparseTensor)
				}
				for _, s := range ap.SparseTensors {
					sparse(s)
				}
				if ap.G != nil {
					graphProto(ap.G)
				}
				for _, g := range ap.Graphs {
					graphProto(g)
				}
			}
		}
	}
	graphProto = func(gp *onnxpb.GraphProto) {
		for _, tp := range gp.Initializer {
			fn(tp)
		}
		for _, sp := range gp.SparseInitializer {
			sparse(sp)
		}
		nodes(gp.Node)
	}
	if mp.Graph != nil {
		graphProto(mp.Graph)
	}
	for _, f := range mp.Functions {
		nodes(f.Node)
	}
}

// zipWriter writes zip entries and the central directory after them.
type zipWriter struct {
	w       *bufio.Writer
	off     int64 // offset in the file of the next byte written
	entries []*zipEntry
}

// newZipWriter returns a writer whose first byte lands at offset off of the
// archive, after the entries already there.
func newZipWriter(w io.Writer, off int64, entries []*zipEntry) *zipWriter {
	return &zipWriter{w: bufio.NewWriterSize(w, 1<<20), off: off, entries: entries}
}

// add writes one stored entry. When align is set, padding in the local
// header's extra field (Android's alignment field, 0xd935) puts the first
// data byte at a multiple of ArchiveAlignment.
func (z *zipWriter) add(name string, data []byte, align bool) error {
	size := int64(len(data))
	e := &zipEntry{name: name, method: methodStore, crc: crc32.ChecksumIEEE(data), size: size, compSize: size, headerOff: z.off}
	var extra []byte
	version := uint16(20)
	if size >= max32 {
		version = 45
		extra = binary.LittleEndian.AppendUint16(extra, zip64ExtraID)
		extra = binary.LittleEndian.AppendUint16(extra, 16)
		extra = binary.LittleEndian.AppendUint64(extra, uint64(size))
		extra = binary.LittleEndian.AppendUint64(extra, uint64(size))
	}
	if align {
		base := z.off + localHeaderLen + int64(len(name)) + int64(len(extra)) + 6
		pad := (ArchiveAlignment - base%ArchiveAlignment) % ArchiveAlignment
		extra = binary.LittleEndian.AppendUint16(extra, alignExtraID)
		extra = binary.LittleEndian.AppendUint16(extra, uint16(2+pad))
		extra = binary.LittleEndian.AppendUint16(extra, ArchiveAlignment)
		extra = append(extra, make([]byte, pad)...)
	}
	h := make([]byte, 0, localHeaderLen+len(name)+len(extra))
	h = binary.LittleEndian.AppendUint32(h, sigLocal)
	h = binary.LittleEndian.AppendUint16(h, version)
	h = binary.LittleEndian.AppendUint16(h, 0) // flags
	h = binary.LittleEndian.AppendUint16(h, methodStore)
	h = binary.LittleEndian.AppendUint16(h, dosTime)
	h = binary.LittleEndian.AppendUint16(h, dosDate)
	h = binary.LittleEndian.AppendUint32(h, e.crc)
	h = binary.LittleEndian.AppendUint32(h, uint32(min(size, max32)))
	h = binary.LittleEndian.AppendUint32(h, uint32(min(size, max32)))
	h = binary.LittleEndian.AppendUint16(h, uint16(len(name)))
	h = binary.LittleEndian.AppendUint16(h, uint16(len(extra)))
	h = append(h, name...)
	h = append(h, extra...)
	e.dataOff = z.off + int64(len(h))
	if _, err := z.w.Write(h); err != nil {
		return err
	}
	if _, err := z.w.Write(data); err != nil {
		return err
	}
	z.off = e.dataOff + size
	z.entries = append(z.entries, e)
	return nil
}

// finish writes the central directory and the end records, zip64 ones
// when the counts, sizes or offsets need them, and flushes.
func (z *zipWriter) finish() error {
	cdOff := z.off
	var cd []byte
	for _, e := range z.entries {
		var ext []byte
		for _, v := range []int64{e.size, e.compSize, e.headerOff} {
			if v >= max32 {
				ext = binary.LittleEndian.AppendUint64(ext, uint64(v))
			}
		}
		version := uint16(20)
		if len(ext) > 0 {
			version = 45
			ext = append(binary.LittleEndian.AppendUint16(binary.LittleEndian.AppendUint16(nil, zip64ExtraID), uint16(len(ext))), ext...)
		}
		cd = binary.LittleEndian.AppendUint32(cd, sigCentral)
		cd = binary.LittleEndian.AppendUint16(cd, 3<<8|45) // made by: Unix, zip 4.5
		cd = binary.LittleEndian.AppendUint16(cd, version)
		cd = binary.LittleEndian.AppendUint16(cd, 0) // flags
		cd = binary.LittleEndian.AppendUint16(cd, e.method)
		cd = binary.LittleEndian.AppendUint16(cd, dosTime)
		cd = binary.LittleEndian.AppendUint16(cd, dosDate)
		cd = binary.LittleEndian.AppendUint32(cd, e.crc)
		cd = binary.LittleEndian.AppendUint32(cd, uint32(min(e.compSize, max32)))
		cd = binary.LittleEndian.AppendUint32(cd, uint32(min(e.size, max32)))
		cd = binary.LittleEndian.AppendUint16(cd, uint16(len(e.name)))
		cd = binary.LittleEndian.AppendUint16(cd, uint16(len(ext)))
		cd = binary.LittleEndian.AppendUint16(cd, 0)         // comment length
		cd = binary.LittleEndian.AppendUint16(cd, 0)         // disk
		cd = binary.LittleEndian.AppendUint16(cd, 0)         // internal attributes
		cd = binary.LittleEndian.AppendUint32(cd, 0o644<<16) // external attributes: -rw-r--r--
		cd = binary.LittleEndian.AppendUint32(cd, uint32(min(e.headerOff, max32)))
		cd = append(cd, e.name...)
		cd = append(cd, ext...)
	}
	count, cdSize := int64(len(z.entries)), int64(len(cd))
	end := cd
	if count >= max16 || cdSize >= max32 || cdOff >= max32 {
		end64Off := cdOff + cdSize
		end = binary.LittleEndian.AppendUint32(end, sigEnd64)
		end = binary.LittleEndian.AppendUint64(end, end64Len-12)
		end = binary.LittleEndian.AppendUint16(end, 3<<8|45)
		end = binary.LittleEndian.AppendUint16(end, 45)
		end = binary.LittleEndian.AppendUint32(end, 0) // this disk
		end = binary.LittleEndian.AppendUint32(end, 0) // directory's disk
		end = binary.LittleEndian.AppendUint64(end, uint64(count))
		end = binary.LittleEndian.AppendUint64(end, uint64(count))
		end = binary.LittleEndian.AppendUint64(end, uint64(cdSize))
		end = binary.LittleEndian.AppendUint64(end, uint64(cdOff))
		end = binary.LittleEndian.AppendUint32(end, sigEnd64Locator)
		end = binary.LittleEndian.AppendUint32(end, 0)
		end = binary.LittleEndian.AppendUint64(end, uint64(end64Off))
		end = binary.LittleEndian.AppendUint32(end, 1) // total disks
	}
	end = binary.LittleEndian.AppendUint32(end, sigEnd)
	end = binary.LittleEndian.AppendUint16(end, 0)
	end = binary.LittleEndian.AppendUint16(end, 0)
	end = binary.LittleEndian.AppendUint16(end, uint16(min(count, max16)))
	end = binary.LittleEndian.AppendUint16(end, uint16(min(count, max16)))
	end = binary.LittleEndian.AppendUint32(end, uint32(min(cdSize, max32)))
	end = binary.LittleEndian.AppendUint32(end, uint32(min(cdOff, max32)))
	end = binary.LittleEndian.AppendUint16(end, 0) // comment length
	if _, err := z.w.Write(end); err != nil {
		return err
	}
	return z.w.Flush()
}

// archiveRef is a range of an archive entry that a tensor of the archive's
// current model references.
type archiveRef struct {
	tensor         string
	entry          string
	offset, length int64 // offset < 0: the whole entry
	data           []byte
}

// RewriteArchiveModel replaces the ModelProto of the ONNX archive at path
// with m's, in place, without moving any weight: the file is cut after its
// last data entry and a new __MODEL_PROTO entry and central directory are
// appended. Each tensor of m whose bytes equal a range the archive's
// current model references (a tensor of the same name is tried first)
// references that range again; any other tensor is stored inline in the
// new ModelProto, and data entries no tensor references any more stay in
// the file. Use it after editing a model's graph (names, nodes,
// attributes); after changing large weights, write a new archive with
// SaveArchive. The file is modified in place: an error part way through the
// final write can leave it damaged.
func RewriteArchiveModel(path string, m *graph.Model) error {
	if err := rewriteArchiveModel(path, m); err != nil {
		return fmt.Errorf("loader: rewrite archive %q: %w", path, err)
	}
	return nil
}

func rewriteArchiveModel(path string, m *graph.Model) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	if !IsArchive(f) {
		return fmt.Errorf("%w: not a zip archive", ErrArchive)
	}
	mapped, unmap, err := mapFile(f, st.Size())
	if err != nil {
		return err
	}
	model, cut, entries, err := newArchiveModel(mapped, m)
	if uerr := unmap(); err == nil {
		err = uerr
	}
	if err != nil {
		return err
	}
	if err := f.Truncate(cut); err != nil {
		return err
	}
	if _, err := f.Seek(cut, io.SeekStart); err != nil {
		return err
	}
	z := newZipWriter(f, cut, entries)
	if err := z.add(ArchiveModelEntry, model, false); err != nil {
		return err
	}
	if err := z.finish(); err != nil {
		return err
	}
	return f.Sync()
}

// newArchiveModel serializes m for the archive mapped as mapped, with its
// tensors referencing the ranges of the archive they equal. It returns the
// model's bytes, the offset at which to write them (where the old model's
// local header starts) and the data entries to keep in the directory.
func newArchiveModel(mapped []byte, m *graph.Model) ([]byte, int64, []*zipEntry, error) {
	a, err := readArchive(bytes.NewReader(mapped), int64(len(mapped)), true)
	if err != nil {
		return nil, 0, nil, err
	}
	a.mapped = mapped
	old, err := a.modelBytes(options{})
	if err != nil {
		return nil, 0, nil, err
	}
	oldMP := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(old, oldMP); err != nil {
		return nil, 0, nil, fmt.Errorf("%w: %s: protobuf: %w", ErrInvalidModel, ArchiveModelEntry, err)
	}
	refs := map[int64][]archiveRef{} // by length
	var refErr error
	walkTensors(oldMP, func(tp *onnxpb.TensorProto) {
		if tp.GetDataLocation() != onnxpb.TensorProto_EXTERNAL || refErr != nil {
			return
		}
		ref, err := a.ref(tp)
		if err != nil {
			refErr = fmt.Errorf("tensor %q: %w", tp.GetName(), err)
			return
		}
		refs[int64(len(ref.data))] = append(refs[int64(len(ref.data))], ref)
	})
	if refErr != nil {
		return nil, 0, nil, refErr
	}
	mp, err := ToProto(m)
	if err != nil {
		return nil, 0, nil, err
	}
	walkTensors(mp, func(tp *onnxpb.TensorProto) {
		cands := refs[int64(len(tp.RawData))]
		if len(tp.RawData) == 0 || len(cands) == 0 {
			return
		}
		// Try the range of the tensor with the same name first.
		i := slices.IndexFunc(cands, func(r archiveRef) bool { return r.tensor == tp.GetName() })
		if i > 0 {
			cands[0], cands[i] = cands[i], cands[0]
		}
		for _, c := range cands {
			if bytes.Equal(c.data, tp.RawData) {
				setExternal(tp, c.entry, c.offset, c.length)
				return
			}
		}
	})
	model, err := marshalProto(mp, m.Name)
	if err != nil {
		return nil, 0, nil, err
	}
	keep := slices.DeleteFunc(slices.Clone(a.order), func(e *zipEntry) bool { return e == a.model })
	return model, a.model.headerOff, keep, nil
}

// ref resolves the external reference of tp to its bytes in the mapped
// archive.
func (a *archive) ref(tp *onnxpb.TensorProto) (archiveRef, error) {
	info, err := parseExternalInfo(tp.ExternalData)
	if err != nil {
		return archiveRef{}, err
	}
	e := a.entries[info.location]
	if e == nil || e == a.model {
		return archiveRef{}, fmt.Errorf("no data entry %q in the archive", info.location)
	}
	ref := archiveRef{tensor: tp.GetName(), entry: e.name, offset: -1, length: -1}
	length := e.size - min(info.offset, e.size)
	if info.hasLength {
		length = info.length
	}
	if info.offset > e.size || length > e.size-info.offset {
		return archiveRef{}, fmt.Errorf("bytes [%d, +%d) lie past the end of entry %q", info.offset, length, e.name)
	}
	if info.offset != 0 || info.hasLength {
		ref.offset, ref.length = info.offset, length
	}
	ref.data = a.mapped[e.dataOff+info.offset : e.dataOff+info.offset+length]
	return ref, nil
}
