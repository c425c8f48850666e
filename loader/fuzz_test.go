package loader

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

// FuzzLoad feeds arbitrary bytes to LoadBytes. It must never panic, and a
// model that loads must survive Marshal and load again.
func FuzzLoad(f *testing.F) {
	rich, err := Marshal(richModel(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(rich)
	f.Add(rich[:len(rich)/2])
	for _, mp := range []*onnxpb.ModelProto{
		functionModelPB(),
		versionModelPB(MaxIRVersion + 1),
		identityModelPB(
			tensorPB("i4", graph.Int4, []int64{3}, func(tp *onnxpb.TensorProto) { tp.Int32Data = []int32{0x12, 0x03} }),
			tensorPB("f16", graph.Float16, []int64{2}, func(tp *onnxpb.TensorProto) { tp.Int32Data = []int32{0x3c00, 0} }),
			tensorPB("c64", graph.Complex64, []int64{1}, func(tp *onnxpb.TensorProto) { tp.FloatData = []float32{1, 2} }),
			tensorPB("huge", graph.Float, []int64{1 << 40, 1 << 20}, func(tp *onnxpb.TensorProto) { tp.RawData = []byte{1, 2, 3, 4} }),
		),
		nestedIfModel(40),
	} {
		b, err := proto.Marshal(mp)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{0x08, 0x0b, 0x3a, 0x02, 0x0a, 0x00})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := LoadBytes(data, "fuzz")
		if err != nil {
			return
		}
		defer m.Close()
		b, err := Marshal(m)
		if err != nil {
			t.Fatalf("a loaded model does not marshal: %v", err)
		}
		m2, err := LoadBytes(b, "fuzz")
		if err != nil {
			t.Fatalf("a marshalled model does not load: %v", err)
		}
		m2.Close()
	})
}
