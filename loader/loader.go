// Package loader reads ONNX models (protobuf files up to IR version 11, with
// their external data, and ONNX zip archives) into graph.Model and writes
// them back.
//
// Loading decodes every message into the graph IR, maps external weight
// files read-only into memory and uses them in place, inlines model-local
// functions and validates the result; the nodes keep the forms of the
// versions the model imports, so that a model written back is valid at its
// imports (sessions bring them to canonical forms: ops.Canonicalize).
// Weights embedded in the model file are
// copied once, by the protobuf decoder; external weights are not copied at
// all when their offset is 8-byte aligned.
package loader

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"

	"google.golang.org/protobuf/proto"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

// Sentinel errors, wrapped by the errors that report these conditions.
var (
	// ErrIRVersion reports an IR version the loader does not support: below
	// 3, or above 11 when the model uses something unknown to this loader.
	ErrIRVersion = errors.New("unsupported IR version")
	// ErrUnsupported reports a valid ONNX feature the loader does not
	// implement, such as segmented tensors.
	ErrUnsupported = errors.New("unsupported feature")
	// ErrExternalData reports external data the loader refuses: a location
	// escaping the model's folder, a missing file, a range past the end of
	// the file, a length or checksum that does not match.
	ErrExternalData = errors.New("bad external data")
)

// Supported IR versions. Newer models load when every field they use is one
// this loader knows.
const (
	MinIRVersion = 3
	MaxIRVersion = 11
)

// Option configures Load, LoadBytes and FromProto.
type Option func(*options)

type options struct {
	baseDir string
	noMmap  bool
	// maxModelSize is WithModelSizeLimit's bound; 0 leaves protobuf's.
	maxModelSize int64
	noChecksums  bool
	// unalignedArchive accepts archive data entries that are not 64-byte
	// aligned; archive, when set, holds the entries external tensors
	// reference.
	unalignedArchive bool
	archive          *archive
}

// WithBaseDir sets the folder that external data locations are relative to.
// Load defaults to the model file's folder; LoadBytes and FromProto refuse
// external data unless a base folder is given.
func WithBaseDir(dir string) Option { return func(o *options) { o.baseDir = dir } }

// WithoutMmap makes the loader read external data into memory it owns
// instead of mapping the files, for callers that must not keep files mapped
// or that will modify the weights.
func WithoutMmap() Option { return func(o *options) { o.noMmap = true } }

// WithoutChecksums skips checking weights against their checksums: the
// CRC-32 that an archive's directory states for each data entry a tensor
// uses, and the SHA-1 that external data may state. A load that maps the
// weights then reads none of them, for speed, and damaged or tampered
// weights load unnoticed. The CRC-32 of an archive's __MODEL_PROTO is
// always checked.
func WithoutChecksums() Option { return func(o *options) { o.noChecksums = true } }

// WithModelSizeLimit bounds the serialized ModelProto that the loader reads
// into memory at bytes: a protobuf model file, the bytes LoadReaderAt
// reads, an archive's __MODEL_PROTO at the size its directory states (what
// a deflated entry inflates to). A larger model is refused before anything
// is read or inflated. The default, and the most, is protobuf's 2 GiB
// limit. External data and an archive's data entries are mapped (or read
// by tensor), not bounded by it.
func WithModelSizeLimit(bytes int64) Option { return func(o *options) { o.maxModelSize = bytes } }

// checkModelSize refuses a serialized ModelProto of size bytes, called
// what, past protobuf's limit or WithModelSizeLimit's.
func (o options) checkModelSize(what string, size int64) error {
	switch {
	case size > maxProtoSize:
		return fmt.Errorf("%s: %d bytes, past protobuf's 2 GiB limit", what, size)
	case o.maxModelSize > 0 && size > o.maxModelSize:
		return fmt.Errorf("%s: %d bytes, past the limit of %d (WithModelSizeLimit)", what, size, o.maxModelSize)
	}
	return nil
}

func buildOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Load reads the ONNX model at path, with its external data, into a
// validated graph.Model named after the file. Only a regular file is read
// (a FIFO or a device is refused without reading from it). A file that
// starts like a zip archive (PK\x03\x04), whatever its extension, is read
// as an ONNX archive and mapped whole. The caller should Close the model
// when done with it to release mapped weight files.
func Load(path string, opts ...Option) (*graph.Model, error) {
	o := buildOptions(opts)
	if o.baseDir == "" {
		o.baseDir = filepath.Dir(path)
	}
	name := filepath.Base(path)
	f, st, err := openRegular(path)
	if err != nil {
		return nil, fmt.Errorf("loader: %w", err)
	}
	defer f.Close()
	if IsArchive(f) {
		return loadArchiveFile(f, name, o)
	}
	if err := o.checkModelSize(path, st.Size()); err != nil {
		return nil, fmt.Errorf("loader: %w", err)
	}
	data, release, err := readWhole(f, st.Size(), o.noMmap)
	if err != nil {
		return nil, fmt.Errorf("loader: model %q: %w", name, err)
	}
	var mp *onnxpb.ModelProto
	err = catchFaults(name, func() (err error) {
		mp, err = unmarshalModel(data, name)
		return err
	})
	// The decoder copies every field out of data, so it may go now.
	release()
	if err != nil {
		return nil, err
	}
	return fromProto(mp, name, o)
}

// catchFaults calls f, which reads files mapped while loading the model
// called name, with memory faults caught (graph.CatchFaults): a file
// truncated during the Load fails it with an error naming the model and
// the file (graph.ErrMappedFileChanged) instead of the process dying of
// SIGBUS. Each caller releases what it mapped when an error comes back.
func catchFaults(name string, f func() error) error {
	var err error
	if fault := graph.CatchFaults(func() error { err = f(); return nil }); fault != nil {
		return fmt.Errorf("loader: model %q: %w", name, fault)
	}
	return err
}

// unmarshalModel decodes the serialized ModelProto of the model called name.
func unmarshalModel(data []byte, name string) (*onnxpb.ModelProto, error) {
	mp := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(data, mp); err != nil {
		return nil, fmt.Errorf("loader: %w %q: protobuf: %w", ErrInvalidModel, name, err)
	}
	return mp, nil
}

// LoadBytes decodes a serialized ModelProto, or an ONNX zip archive, into a
// validated graph.Model called name. The model does not keep data, which
// the caller may reuse. External data is read relative to the folder given
// with WithBaseDir, and refused without one.
func LoadBytes(data []byte, name string, opts ...Option) (*graph.Model, error) {
	if bytes.HasPrefix(data, zipMagic) {
		return LoadReaderAt(bytes.NewReader(data), int64(len(data)), name, opts...)
	}
	mp, err := unmarshalModel(data, name)
	if err != nil {
		return nil, err
	}
	return fromProto(mp, name, buildOptions(opts))
}

// FromProto converts a decoded ModelProto into a validated graph.Model
// called name, reading external data relative to baseDir (refused when
// baseDir is empty; a WithBaseDir option overrides it). The model shares
// memory with mp (raw_data, typed value fields, attribute lists), so mp must
// not be modified while the model is in use.
func FromProto(mp *onnxpb.ModelProto, name, baseDir string, opts ...Option) (*graph.Model, error) {
	o := options{baseDir: baseDir}
	for _, opt := range opts {
		opt(&o)
	}
	return fromProto(mp, name, o)
}

// fromProto decodes mp, inlines its functions, puts nodes out of
// topological order in order (with a warning) and validates the result. On
// error it releases whatever external data it mapped.
func fromProto(mp *onnxpb.ModelProto, name string, o options) (*graph.Model, error) {
	if mp == nil {
		return nil, fmt.Errorf("loader: %w %q: nil ModelProto", ErrInvalidModel, name)
	}
	m := &graph.Model{Name: name}
	err := catchFaults(name, func() error {
		fns, err := decodeModel(m, mp, o)
		if err == nil {
			err = inlineFunctions(m, fns)
		}
		if err == nil {
			m.Warnings = append(m.Warnings, sortGraphs(m)...)
			err = validate(m)
		}
		return err
	})
	if err != nil {
		if cerr := m.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("loader: releasing external data: %w", cerr))
		}
		return nil, err
	}
	return m, nil
}
