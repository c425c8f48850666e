package planner_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/planner"
)

// shardedMatMul builds y = relu(x @ w) on x [4, 6], w [6, 5] for
// configuration "pp" of two devices, with the given specs on the MatMul.
func shardedMatMul(specs ...graph.ShardingSpec) *graph.Model {
	g := graph.NewGraph("tp")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(4, 6))}}
	g.Initializers["w"] = graph.NewTensor(graph.Float, []int64{6, 5})
	g.Nodes = []*graph.Node{
		{Name: "mm", OpType: "MatMul", Inputs: []string{"x", "w"}, Outputs: []string{"m"},
			DeviceConfigs: []graph.NodeDeviceConfiguration{{ConfigurationID: "pp", Sharding: specs}}},
		{Name: "relu", OpType: "Relu", Inputs: []string{"m"}, Outputs: []string{"y"}, Index: 1},
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	return &graph.Model{Name: "tp", IRVersion: 11, Opsets: map[string]int64{"": 17}, Graph: g,
		Configurations: []graph.DeviceConfiguration{{Name: "pp", NumDevices: 2}}}
}

func halves(tensor string, axis int64) graph.ShardingSpec {
	return graph.ShardingSpec{TensorName: tensor, Devices: []int64{0, 1},
		ShardedDims: []graph.ShardedDim{{Axis: axis, SimpleSharding: []graph.SimpleSharding{{Dim: graph.UnknownDim(), NumShards: 2}}}}}
}

var (
	gpuOps = map[string]bool{"MatMul": true, "Relu": true}
	host   = fakeDevice{"cpu", map[string]bool{"MatMul": true, "Relu": true, "Slice": true, "Concat": true, "Sum": true, "Identity": true}}
)

// shardSteps plans m on two fake GPUs and returns each compute step as
// "device op name" and the report.
func shardSteps(t *testing.T, m *graph.Model) ([]string, *planner.Report) {
	t.Helper()
	d0, d1 := fakeDevice{"d0", gpuOps}, fakeDevice{"d1", gpuOps}
	p, err := planner.New(m, planner.Options{Devices: []planner.Device{d0, d1, host}, Stages: stagesOn(d0, d1)})
	require.NoError(t, err)
	var steps []string
	for _, st := range p.Steps {
		if st.Kind == planner.Compute {
			steps = append(steps, st.Device+" "+st.Node.OpType+" "+st.Node.Name)
		}
	}
	return steps, p.Report()
}

func TestShardMatMulColumns(t *testing.T) {
	steps, r := shardSteps(t, shardedMatMul(halves("w", 1)))
	// Columns 0:3 and 3:5 of w (an uneven split), the Relus follow their
	// shards, and the output is gathered on the host.
	require.Equal(t, []string{
		"d0 MatMul mm@d0[0:4,0:3]", "d0 Relu relu@d0[0:4,0:3]",
		"d1 MatMul mm@d1[0:4,3:5]", "d1 Relu relu@d1[0:4,3:5]",
		"cpu Concat gather y",
	}, steps)
	raw, err := json.Marshal(r)
	require.NoError(t, err)
	var doc struct {
		Steps []struct {
			Node     string
			Value    string
			Bytes    *int64
			Comm     string
			Shard    *planner.Shard
			Device   any
			Physical string
		}
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	var shards []planner.Shard
	var weights []string
	for _, s := range doc.Steps {
		if s.Shard != nil {
			shards = append(shards, *s.Shard)
		}
		if s.Comm != "" {
			require.Equal(t, planner.CommGather, s.Comm)
			require.Equal(t, int64(4*5*4), *s.Bytes)
			// The gather joins the shards of d0 and d1, on the host.
			require.Equal(t, []any{"d0", "d1"}, s.Device)
			require.Equal(t, "cpu", s.Physical)
		} else if s.Shard != nil {
			require.Equal(t, "d"+fmt.Sprint(s.Shard.Index), s.Device)
		}
		if s.Value != "" && s.Value[0] == 'w' {
			weights = append(weights, s.Value)
		}
	}
	require.Equal(t, []planner.Shard{
		{Of: "mm", Index: 0, Count: 2, Box: "[0:4,0:3]"}, {Of: "relu", Index: 0, Count: 2, Box: "[0:4,0:3]"},
		{Of: "mm", Index: 1, Count: 2, Box: "[0:4,3:5]"}, {Of: "relu", Index: 1, Count: 2, Box: "[0:4,3:5]"},
	}, shards)
	// Each device gets only its columns of the weight.
	require.Equal(t, []string{"w[0:6,0:3]", "w[0:6,3:5]"}, weights)
}

func TestShardMatMulReducedAxis(t *testing.T) {
	steps, r := shardSteps(t, shardedMatMul(halves("x", 1), halves("w", 0)))
	require.Equal(t, []string{
		"cpu Slice scatter x[0:4,0:3]", "cpu Slice scatter x[0:4,3:6]",
		"d0 MatMul mm@d0/partial0", "d1 MatMul mm@d1/partial1",
		"cpu Sum all-reduce m", "d0 Relu relu",
	}, steps)
	var moved int64
	for _, s := range r.Steps {
		if s.Op == "" {
			moved += *s.Bytes
		}
	}
	require.Equal(t, r.TransferBytes, moved)
	// x's halves and w's halves up, two partial products down, the sum up
	// to d0 and the output down.
	require.Equal(t, int64(2*4*3*4+2*3*5*4+2*4*5*4+2*4*5*4), r.TransferBytes)
}

func TestShardOutputSpec(t *testing.T) {
	// Row halves asked of the MatMul's output: the node runs once per
	// row half of x, and the Relu keeps the split.
	steps, _ := shardSteps(t, shardedMatMul(halves("m", 0)))
	require.Equal(t, []string{
		"cpu Slice scatter x[0:2,0:6]", "cpu Slice scatter x[2:4,0:6]",
		"d0 MatMul mm@d0[0:2,0:5]", "d0 Relu relu@d0[0:2,0:5]",
		"d1 MatMul mm@d1[2:4,0:5]", "d1 Relu relu@d1[2:4,0:5]",
		"cpu Concat gather y",
	}, steps)
}
