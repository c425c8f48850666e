package loader

import (
	"bytes"
	"cmp"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

// The ONNX zip archive is a zip file used as a key-value store: data
// entries first, each stored uncompressed with its first byte 64-byte
// aligned in the file, and the serialized ModelProto last, in an entry named
// __MODEL_PROTO. Tensors reference entries with data_location EXTERNAL and
// an external_data location equal to the entry name (offset and length,
// when given, select bytes within the entry). The loader maps the archive
// once, read-only, and uses each tensor's bytes in place.

// ArchiveModelEntry is the name of the archive entry that holds the
// serialized ModelProto.
const ArchiveModelEntry = "__MODEL_PROTO"

// ArchiveAlignment is the alignment, in bytes from the start of the file, of
// the first byte of every data entry in an archive.
const ArchiveAlignment = 64

// ErrArchive reports a zip archive the loader refuses: malformed, with
// compressed, misaligned, overlapping or duplicate data entries, or without
// a final __MODEL_PROTO entry.
var ErrArchive = errors.New("bad ONNX archive")

// zipMagic starts every zip file whose first entry is a local file header.
var zipMagic = []byte("PK\x03\x04")

// Zip record signatures and sizes.
const (
	sigLocal         = 0x04034b50
	sigCentral       = 0x02014b50
	sigEnd           = 0x06054b50
	sigEnd64         = 0x06064b50
	sigEnd64Locator  = 0x07064b50
	localHeaderLen   = 30
	centralHeaderLen = 46
	endLen           = 22
	end64Len         = 56
	end64LocatorLen  = 20
	zip64ExtraID     = 0x0001
	alignExtraID     = 0xd935 // Android's alignment extra field
	methodStore      = 0
	methodDeflate    = 8
	flagEncrypted    = 1
	maxDeflateRun    = 258 // the longest run one deflate code writes
	max16            = 0xffff
	max32            = 0xffffffff
)

// WithUnalignedArchive makes the loader accept archive data entries whose
// first byte is not 64-byte aligned; tensors whose bytes are not 8-byte
// aligned are then copied into memory the model owns.
func WithUnalignedArchive() Option { return func(o *options) { o.unalignedArchive = true } }

// zipEntry is one entry of a zip archive's central directory.
type zipEntry struct {
	name      string
	method    uint16
	flags     uint16
	crc       uint32
	compSize  int64
	size      int64
	headerOff int64 // offset of the local file header
	dataOff   int64 // offset of the first data byte
}

// archive is a parsed ONNX zip archive.
type archive struct {
	r      io.ReaderAt
	mapped []byte // the whole file when mapped; nil when read through r
	// mapping registers mapped (see graph.Mapping).
	mapping *graph.Mapping
	entries map[string]*zipEntry
	model   *zipEntry
	// order lists the entries in central-directory order.
	order []*zipEntry
	// files caches the data of the entries tensors referenced.
	files map[string]*extFile
}

// IsArchive reports whether the file read by r starts like a zip archive
// (PK\x03\x04), which Load then reads as an ONNX archive.
func IsArchive(r io.ReaderAt) bool {
	var magic [4]byte
	n, _ := r.ReadAt(magic[:], 0)
	return n == len(magic) && bytes.Equal(magic[:], zipMagic)
}

// readArchive parses the central directory of the zip archive of size bytes
// read by r and checks the rules of the ONNX archive format. Data entries
// must be 64-byte aligned unless unaligned is set.
func readArchive(r io.ReaderAt, size int64, unaligned bool) (*archive, error) {
	a, err := parseArchive(r, size, unaligned)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrArchive, err)
	}
	return a, nil
}

func parseArchive(r io.ReaderAt, size int64, unaligned bool) (*archive, error) {
	cdOff, cdSize, count, err := findDirectory(r, size)
	if err != nil {
		return nil, err
	}
	// Each central record takes at least 46 bytes, which bounds count
	// before anything is allocated for it.
	if count > cdSize/centralHeaderLen {
		return nil, fmt.Errorf("central directory of %d bytes cannot hold %d entries", cdSize, count)
	}
	cd := make([]byte, cdSize)
	if err := readAt(r, cd, cdOff); err != nil {
		return nil, fmt.Errorf("reading the central directory: %w", err)
	}
	a := &archive{r: r, entries: make(map[string]*zipEntry, count), files: map[string]*extFile{}}
	folded := make(map[string]string, count)
	for i := range count {
		e, rest, err := parseCentral(cd, i)
		if err != nil {
			return nil, err
		}
		cd = rest
		if err := checkEntryName(e.name); err != nil {
			return nil, fmt.Errorf("entry #%d: %w", i, err)
		}
		lower := strings.ToLower(e.name)
		if prev, dup := folded[lower]; dup {
			return nil, fmt.Errorf("entries %q and %q have the same name ignoring case", prev, e.name)
		}
		folded[lower] = e.name
		if err := a.locate(e, cdOff); err != nil {
			return nil, fmt.Errorf("entry %q: %w", e.name, err)
		}
		isModel := e.name == ArchiveModelEntry
		switch {
		case e.flags&flagEncrypted != 0:
			return nil, fmt.Errorf("entry %q is encrypted", e.name)
		case isModel && e.method != methodStore && e.method != methodDeflate:
			return nil, fmt.Errorf("entry %q uses compression method %d; want 0 (stored) or 8 (deflate)", e.name, e.method)
		case !isModel && e.method != methodStore:
			return nil, fmt.Errorf("data entry %q is compressed (method %d); data entries must be stored (method 0) to be mapped", e.name, e.method)
		case e.method == methodStore && e.compSize != e.size:
			return nil, fmt.Errorf("stored entry %q has compressed size %d but size %d", e.name, e.compSize, e.size)
		case !isModel && !unaligned && e.size > 0 && e.dataOff%ArchiveAlignment != 0:
			return nil, fmt.Errorf("data entry %q starts at offset %d, not a multiple of %d (realign the archive with onnxvk convert, or load with loader.WithUnalignedArchive)", e.name, e.dataOff, ArchiveAlignment)
		}
		a.entries[e.name] = e
		a.order = append(a.order, e)
	}
	if len(cd) != 0 {
		return nil, fmt.Errorf("%d bytes left in the central directory after its %d entries", len(cd), count)
	}
	a.model = a.entries[ArchiveModelEntry]
	if a.model == nil {
		return nil, fmt.Errorf("no %s entry", ArchiveModelEntry)
	}
	byOff := slices.Clone(a.order)
	slices.SortFunc(byOff, func(x, y *zipEntry) int { return cmp.Compare(x.headerOff, y.headerOff) })
	for i := 1; i < len(byOff); i++ {
		prev, e := byOff[i-1], byOff[i]
		if e.headerOff < prev.dataOff+prev.compSize {
			return nil, fmt.Errorf("entries %q and %q overlap", prev.name, e.name)
		}
	}
	if byOff[len(byOff)-1] != a.model {
		return nil, fmt.Errorf("%s is not the last entry", ArchiveModelEntry)
	}
	return a, nil
}

// findDirectory locates the end of central directory record, and the zip64
// one when the archive has it, and returns the central directory's offset,
// size and entry count.
func findDirectory(r io.ReaderAt, size int64) (off, dirSize, count int64, err error) {
	if size < endLen {
		return 0, 0, 0, fmt.Errorf("%d bytes is too short for a zip archive", size)
	}
	tailLen := min(size, endLen+max16)
	tail := make([]byte, tailLen)
	if err := readAt(r, tail, size-tailLen); err != nil {
		return 0, 0, 0, fmt.Errorf("reading the end of the archive: %w", err)
	}
	i := len(tail) - endLen
	for ; i >= 0; i-- {
		if binary.LittleEndian.Uint32(tail[i:]) == sigEnd && i+endLen+int(le16(tail[i+20:])) == len(tail) {
			break
		}
	}
	if i < 0 {
		return 0, 0, 0, errors.New("no end of central directory record")
	}
	end := tail[i:]
	endOff := size - tailLen + int64(i)
	if le16(end[4:]) != 0 || le16(end[6:]) != 0 || le16(end[8:]) != le16(end[10:]) {
		return 0, 0, 0, errors.New("multi-disk archives are not supported")
	}
	count, dirSize, off = int64(le16(end[10:])), int64(le32(end[12:])), int64(le32(end[16:]))
	if count == max16 || dirSize == max32 || off == max32 {
		if off, dirSize, count, err = findDirectory64(r, endOff); err != nil {
			return 0, 0, 0, err
		}
	}
	if off < 0 || dirSize < 0 || count < 0 || off > endOff || dirSize > endOff-off {
		return 0, 0, 0, fmt.Errorf("central directory [%d, +%d) lies outside the archive", off, dirSize)
	}
	return off, dirSize, count, nil
}

// findDirectory64 reads the zip64 end of central directory locator just
// before endOff and the record it points to.
func findDirectory64(r io.ReaderAt, endOff int64) (off, dirSize, count int64, err error) {
	if endOff < end64LocatorLen+end64Len {
		return 0, 0, 0, errors.New("no room for a zip64 end of central directory record")
	}
	loc := make([]byte, end64LocatorLen)
	if err := readAt(r, loc, endOff-end64LocatorLen); err != nil {
		return 0, 0, 0, fmt.Errorf("reading the zip64 locator: %w", err)
	}
	if le32(loc) != sigEnd64Locator {
		return 0, 0, 0, errors.New("the end record asks for zip64 but there is no zip64 locator")
	}
	recOff := int64(le64(loc[8:]))
	if recOff < 0 || recOff > endOff-end64LocatorLen-end64Len {
		return 0, 0, 0, fmt.Errorf("zip64 end record offset %d lies outside the archive", recOff)
	}
	rec := make([]byte, end64Len)
	if err := readAt(r, rec, recOff); err != nil {
		return 0, 0, 0, fmt.Errorf("reading the zip64 end record: %w", err)
	}
	if le32(rec) != sigEnd64 {
		return 0, 0, 0, errors.New("bad zip64 end of central directory signature")
	}
	if le32(rec[16:]) != 0 || le32(rec[20:]) != 0 || le64(rec[24:]) != le64(rec[32:]) {
		return 0, 0, 0, errors.New("multi-disk archives are not supported")
	}
	count, dirSize, off = int64(le64(rec[32:])), int64(le64(rec[40:])), int64(le64(rec[48:]))
	if off > recOff {
		return 0, 0, 0, fmt.Errorf("central directory offset %d lies past the zip64 end record", off)
	}
	return off, dirSize, count, nil
}

// parseCentral decodes the central directory record at the start of b and
// returns it with the bytes after it.
func parseCentral(b []byte, i int64) (*zipEntry, []byte, error) {
	if len(b) < centralHeaderLen || le32(b) != sigCentral {
		return nil, nil, fmt.Errorf("central directory record #%d is missing or malformed", i)
	}
	nameLen, extraLen, commentLen := int(le16(b[28:])), int(le16(b[30:])), int(le16(b[32:]))
	recLen := centralHeaderLen + nameLen + extraLen + commentLen
	if len(b) < recLen {
		return nil, nil, fmt.Errorf("central directory record #%d runs past the directory", i)
	}
	if le16(b[34:]) != 0 {
		return nil, nil, fmt.Errorf("central directory record #%d is on another disk", i)
	}
	e := &zipEntry{
		name:      string(b[centralHeaderLen : centralHeaderLen+nameLen]),
		flags:     le16(b[8:]),
		method:    le16(b[10:]),
		crc:       le32(b[16:]),
		compSize:  int64(le32(b[20:])),
		size:      int64(le32(b[24:])),
		headerOff: int64(le32(b[42:])),
	}
	extra := b[centralHeaderLen+nameLen : centralHeaderLen+nameLen+extraLen]
	if e.size == max32 || e.compSize == max32 || e.headerOff == max32 {
		if err := e.readZip64(extra); err != nil {
			return nil, nil, fmt.Errorf("entry %q: %w", e.name, err)
		}
	}
	return e, b[recLen:], nil
}

// readZip64 takes the sizes and offset that the central record marks as
// 0xffffffff from its zip64 extra field.
func (e *zipEntry) readZip64(extra []byte) error {
	for len(extra) >= 4 {
		id, n := le16(extra), int(le16(extra[2:]))
		if len(extra) < 4+n {
			break
		}
		field := extra[4 : 4+n]
		extra = extra[4+n:]
		if id != zip64ExtraID {
			continue
		}
		for _, p := range []*int64{&e.size, &e.compSize, &e.headerOff} {
			if *p != max32 {
				continue
			}
			if len(field) < 8 {
				return errors.New("zip64 extra field too short")
			}
			v := le64(field)
			if v > 1<<62 {
				return fmt.Errorf("zip64 value %d is out of range", v)
			}
			*p = int64(v)
			field = field[8:]
		}
		return nil
	}
	return errors.New("sizes marked as zip64 but no zip64 extra field")
}

// locate reads e's local file header to find where its data starts, and
// checks that the data lies before the central directory at cdOff.
func (a *archive) locate(e *zipEntry, cdOff int64) error {
	if e.headerOff > cdOff-localHeaderLen {
		return fmt.Errorf("local header offset %d lies past the central directory at %d", e.headerOff, cdOff)
	}
	h := make([]byte, localHeaderLen+len(e.name))
	if err := readAt(a.r, h, e.headerOff); err != nil {
		return fmt.Errorf("reading the local header: %w", err)
	}
	if le32(h) != sigLocal {
		return fmt.Errorf("no local file header at offset %d", e.headerOff)
	}
	nameLen, extraLen := int64(le16(h[26:])), int64(le16(h[28:]))
	if name := h[localHeaderLen:]; nameLen != int64(len(e.name)) || string(name) != e.name {
		return fmt.Errorf("the local header at offset %d names another entry", e.headerOff)
	}
	e.dataOff = e.headerOff + localHeaderLen + nameLen + extraLen
	if e.dataOff > cdOff || e.compSize > cdOff-e.dataOff {
		return fmt.Errorf("data [%d, +%d) runs past the start of the central directory at %d", e.dataOff, e.compSize, cdOff)
	}
	return nil
}

// checkEntryName accepts the names the archive format allows: C
// identifiers, which rules out path separators, dots and empty names.
func checkEntryName(name string) error {
	if strings.ContainsAny(name, `/\`) {
		return fmt.Errorf("entry name %q contains a path separator", name)
	}
	if !isCIdentifier(name) {
		return fmt.Errorf("entry name %q is not a C identifier", name)
	}
	return nil
}

// isCIdentifier reports whether s is [A-Za-z_][A-Za-z0-9_]*.
func isCIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// modelBytes returns the serialized ModelProto, decompressed when deflated,
// with its CRC-32 checked. A deflated entry is inflated into one buffer of
// the size the directory states, which o bounds; inflating to more or
// fewer bytes fails.
func (a *archive) modelBytes(o options) ([]byte, error) {
	e := a.model
	if err := o.checkModelSize(e.name, e.size); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrArchive, err)
	}
	// Deflate expands a byte to at most 1032 (a 258-byte match in under two
	// bits): a size past that is refused before a buffer is allocated.
	if e.method == methodDeflate && (e.size-maxDeflateRun)/1032 > e.compSize {
		return nil, fmt.Errorf("%w: %d deflated bytes of %s cannot inflate to %d bytes, as the directory states", ErrArchive, e.compSize, e.name, e.size)
	}
	var b []byte
	switch {
	case e.method == methodStore && a.mapped != nil:
		b = a.mapped[e.dataOff : e.dataOff+e.size]
	case e.method == methodStore:
		b = make([]byte, e.size)
		if err := readAt(a.r, b, e.dataOff); err != nil {
			return nil, fmt.Errorf("%w: reading %s: %w", ErrArchive, e.name, err)
		}
	default:
		fr := flate.NewReader(io.NewSectionReader(a.r, e.dataOff, e.compSize))
		defer fr.Close()
		b = make([]byte, e.size)
		n, err := io.ReadFull(fr, b)
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return nil, fmt.Errorf("%w: %s inflates to %d bytes, not the %d the directory states", ErrArchive, e.name, n, e.size)
		case err != nil:
			return nil, fmt.Errorf("%w: inflating %s: %w", ErrArchive, e.name, err)
		}
		var more [1]byte
		if n, _ := fr.Read(more[:]); n > 0 {
			return nil, fmt.Errorf("%w: %s inflates past the %d bytes the directory states", ErrArchive, e.name, e.size)
		}
	}
	if sum := crc32.ChecksumIEEE(b); sum != e.crc {
		return nil, fmt.Errorf("%w: %s has CRC-32 %08x, the directory says %08x", ErrArchive, e.name, sum, e.crc)
	}
	return b, nil
}

// entry returns the data of the entry that an external tensor of size
// bytes references, as an external file: mapped in place, or read into
// memory the model owns when the archive is not mapped. With verify set,
// the entry's CRC-32 is checked the first time it is used.
func (a *archive) entry(info externalInfo, size int64, verify bool) (*extFile, error) {
	e := a.entries[info.location]
	if e == nil || e == a.model {
		return nil, fmt.Errorf("no data entry %q in the archive", info.location)
	}
	if info.offset == 0 && !info.hasLength && e.size != size {
		return nil, fmt.Errorf("entry %q holds %d bytes, the tensor needs %d", e.name, e.size, size)
	}
	if ef, ok := a.files[e.name]; ok {
		return ef, nil
	}
	ef := &extFile{size: e.size}
	switch {
	case e.size == 0:
	case a.mapped != nil:
		ef.data = a.mapped[e.dataOff : e.dataOff+e.size : e.dataOff+e.size]
		ef.mapping = a.mapping
	default:
		ef.data = graph.AllocBytes(e.size)
		if err := readAt(a.r, ef.data, e.dataOff); err != nil {
			return nil, fmt.Errorf("reading entry %q: %w", e.name, err)
		}
	}
	if verify {
		if sum := crc32.ChecksumIEEE(ef.data); sum != e.crc {
			return nil, fmt.Errorf("%w: entry %q has CRC-32 %08x, the directory says %08x (damaged or changed; WithoutChecksums skips the check)", ErrArchive, e.name, sum, e.crc)
		}
	}
	a.files[e.name] = ef
	return ef, nil
}

// loadArchive loads the ONNX archive of size bytes read by r. mapped, when
// not nil, is the whole file mapped in memory, registered as mapping and
// released by unmap; the model owns the mapping from then on (its Close
// releases it).
func loadArchive(r io.ReaderAt, size int64, mapped []byte, mapping *graph.Mapping, unmap func() error, name string, o options) (*graph.Model, error) {
	release := func(err error) error {
		if unmap != nil {
			if uerr := unmap(); uerr != nil {
				err = errors.Join(err, fmt.Errorf("loader: unmapping %q: %w", name, uerr))
			}
		}
		return err
	}
	var a *archive
	mp := &onnxpb.ModelProto{}
	err := catchFaults(name, func() error {
		var err error
		if a, err = readArchive(r, size, o.unalignedArchive); err != nil {
			return fmt.Errorf("loader: model %q: %w", name, err)
		}
		a.mapped, a.mapping = mapped, mapping
		data, err := a.modelBytes(o)
		if err != nil {
			return fmt.Errorf("loader: model %q: %w", name, err)
		}
		if err := proto.Unmarshal(data, mp); err != nil {
			return fmt.Errorf("loader: %w %q: %s: protobuf: %w", ErrInvalidModel, name, ArchiveModelEntry, err)
		}
		return nil
	})
	if err != nil {
		return nil, release(err)
	}
	o.archive = a
	m, err := fromProto(mp, name, o)
	if err != nil {
		return nil, release(err)
	}
	if unmap != nil {
		m.AddCloser(closerFunc(unmap))
	}
	return m, nil
}

// loadArchiveFile loads the ONNX archive open as f, mapping it whole
// (unless mapping is off) so that tensors use its bytes in place.
func loadArchiveFile(f *os.File, name string, o options) (*graph.Model, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("loader: model %q: %w", name, err)
	}
	if o.noMmap || !st.Mode().IsRegular() {
		return loadArchive(f, st.Size(), nil, nil, nil, name, o)
	}
	data, mapping, unmap, err := mapWeights(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("loader: model %q: %w", name, err)
	}
	return loadArchive(bytes.NewReader(data), st.Size(), data, mapping, unmap, name, o)
}

// LoadReaderAt loads the model of size bytes read by r and calls it name:
// an ONNX zip archive, or a serialized ModelProto (whose external data is
// read relative to the folder given with WithBaseDir, and refused without
// one). When r is an *os.File the archive is mapped and its weights used in
// place; otherwise each data entry a tensor references is read into memory
// the model owns. The caller should Close the model when done with it.
func LoadReaderAt(r io.ReaderAt, size int64, name string, opts ...Option) (*graph.Model, error) {
	o := buildOptions(opts)
	if size < 0 {
		return nil, fmt.Errorf("loader: model %q: negative size %d", name, size)
	}
	if !IsArchive(r) {
		return loadProtoReaderAt(r, size, name, o)
	}
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Size() == size {
			return loadArchiveFile(f, name, o)
		}
	}
	return loadArchive(r, size, nil, nil, nil, name, o)
}

// loadProtoReaderAt reads a serialized ModelProto of size bytes from r into
// memory and decodes it.
func loadProtoReaderAt(r io.ReaderAt, size int64, name string, o options) (*graph.Model, error) {
	if err := o.checkModelSize(fmt.Sprintf("model %q, not a zip archive", name), size); err != nil {
		return nil, fmt.Errorf("loader: %w", err)
	}
	data := make([]byte, size)
	if err := readAt(r, data, 0); err != nil {
		return nil, fmt.Errorf("loader: model %q: %w", name, err)
	}
	mp, err := unmarshalModel(data, name)
	if err != nil {
		return nil, err
	}
	return fromProto(mp, name, o)
}

// readAt fills b from r at off; a short read is an error, an io.EOF with a
// full read is not.
func readAt(r io.ReaderAt, b []byte, off int64) error {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return err
}

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
