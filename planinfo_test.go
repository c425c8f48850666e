package onnxvk_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
)

// TestPlanInfo plans mlpModel on the CPU for a batch of 2: every node left
// after fusion runs on the CPU, in order, the plan takes memory, and its
// text and JSON forms name the nodes. An unknown input or a shape of the
// wrong rank is an ErrInputMismatch naming the input.
func TestPlanInfo(t *testing.T) {
	sess, err := onnxvk.NewSession(mlpModel(), onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	defer sess.Close()
	info, err := sess.PlanInfo(map[string][]int64{"x": {2, 4, 8}})
	require.NoError(t, err)
	require.NotEmpty(t, info.Nodes)
	var ops []string
	for _, n := range info.Nodes {
		require.Equal(t, "cpu", n.Device, n.Name)
		require.Empty(t, n.Declined, n.Name)
		ops = append(ops, n.Op)
	}
	require.Contains(t, ops, "Softmax")
	require.Equal(t, "Softmax", ops[len(ops)-1])
	require.Positive(t, info.PeakBytes)
	require.Zero(t, info.TransferBytes)

	var text bytes.Buffer
	require.NoError(t, info.WriteText(&text))
	require.Contains(t, text.String(), info.Nodes[len(info.Nodes)-1].Name)
	data, err := json.Marshal(info)
	require.NoError(t, err)
	var doc struct {
		Steps []struct{ Node, Op, Device string }
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	require.Len(t, doc.Steps, len(info.Nodes))

	_, err = sess.PlanInfo(map[string][]int64{"y": {2}})
	require.ErrorIs(t, err, onnxvk.ErrInputMismatch)
	require.ErrorContains(t, err, `no input "y"`)
	_, err = sess.PlanInfo(map[string][]int64{"x": {2, 32}})
	require.ErrorIs(t, err, onnxvk.ErrInputMismatch)
	require.ErrorContains(t, err, `input "x"`)
}
