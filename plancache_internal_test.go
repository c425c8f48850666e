package onnxvk

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// vectorModel is y = relu(x) for x of shape [N].
func vectorModel() *graph.Model {
	g := graph.NewGraph("vector")
	shape := graph.Shape{graph.SymDim("N")}
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, shape)}}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: graph.TensorType(graph.Float, shape)}}
	g.Nodes = []*graph.Node{{Name: "relu", OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"y"}}}
	return &graph.Model{Name: "vector", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g}
}

// vectorInput returns an input of vectorModel of n elements, as a value
// and its concrete plan's cache key.
func vectorInput(t *testing.T, s *Session, n int64) (map[string]graph.Value, string) {
	t.Helper()
	in := map[string]graph.Value{"x": graph.NewTensor(graph.Float, []int64{n})}
	call, err := s.checkInputs(in)
	require.NoError(t, err)
	return in, call.classKey(nil)
}

// TestPlanCacheLRU fills the plan cache, uses its oldest plan again and
// adds one more: the plan that leaves is the least recently used one, and
// the plan used again stays (a repeated sequence of shapes does not
// re-plan).
func TestPlanCacheLRU(t *testing.T) {
	s, err := NewSession(vectorModel(), WithDevice("cpu"), WithoutShapeClasses())
	require.NoError(t, err)
	defer s.Close()
	run := func(n int64) string {
		in, key := vectorInput(t, s, n)
		_, err := valueSession{s}.RunValues(context.Background(), in)
		require.NoError(t, err)
		return key
	}
	var keys []string
	for n := range int64(maxPlans) {
		keys = append(keys, run(n+1))
	}
	first := s.plans.plans[keys[0]].ex
	require.Equal(t, keys[0], run(1))
	run(maxPlans + 1)
	require.Len(t, s.plans.plans, maxPlans)
	kept := s.plans.plans[keys[0]]
	require.True(t, kept != nil && kept.ex == first, "the plan used again left the cache")
	_, stayed := s.plans.plans[keys[1]]
	require.False(t, stayed, "the least recently used plan stayed")
}

// TestEvictedPlanInUse evicts a Vulkan plan while a Run holds it: it keeps
// its device memory, and runs, until that Run is done, and then releases
// it.
func TestEvictedPlanInUse(t *testing.T) {
	s, err := NewSession(vectorModel(), WithDevice("vulkan"), WithoutShapeClasses())
	if errors.Is(err, ErrDeviceUnavailable) {
		testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
	}
	require.NoError(t, err)
	defer s.Close()
	in, key := vectorInput(t, s, 1000)
	call, err := s.checkInputs(in)
	require.NoError(t, err)
	held, err := s.executor(call, nil, false, false)
	require.NoError(t, err)
	for n := range int64(maxPlans) {
		in, _ := vectorInput(t, s, n+1)
		_, err := valueSession{s}.RunValues(context.Background(), in)
		require.NoError(t, err)
	}
	require.NotContains(t, s.plans.plans, key)
	_, err = held.ex.Run(context.Background(), in)
	require.NoError(t, err, "an evicted plan in use was released")
	before := s.DeviceMemoryInUse()
	s.done(held)
	require.Less(t, s.DeviceMemoryInUse(), before, "the evicted plan kept its memory")
	_, err = held.ex.Run(context.Background(), in)
	require.ErrorContains(t, err, "released", "the evicted plan still runs after its release")
}
