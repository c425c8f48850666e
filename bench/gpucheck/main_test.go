package main

import (
	"testing"

	"github.com/onnxvk/onnxvk/graph/ops"

	"github.com/stretchr/testify/require"
)

func TestTestResults(t *testing.T) {
	// go test -v streams what a test logs under its === RUN line.
	out := `=== RUN   TestA
    a_test.go:5: fine
--- PASS: TestA (0.01s)
=== RUN   TestB
=== RUN   TestB/x
    b_test.go:10: element 3 = 0, want NaN
    b_test.go:12: 1 of 9 elements out of tolerance
=== RUN   TestB/y
--- FAIL: TestB (0.02s)
    --- FAIL: TestB/x (0.01s)
    --- PASS: TestB/y (0.00s)
=== RUN   TestC
--- FAIL: TestC (0.00s)
    c_test.go:3: logged at the end
FAIL
`
	failed, messages, passed := testResults(out)
	require.Equal(t, []string{"TestB", "TestB/x", "TestC"}, failed)
	require.Equal(t, 2, passed)
	require.Equal(t, map[string][]string{
		"TestB/x": {"b_test.go:10: element 3 = 0, want NaN", "b_test.go:12: 1 of 9 elements out of tolerance"},
		"TestC":   {"c_test.go:3: logged at the end"},
	}, messages)
}

func TestScheduleTimes(t *testing.T) {
	res := scheduleTimes("w", []string{"device", "a", "b"}, [][]float64{{2, 4, 3}, {6, 1, 9}, {}}, []int{5, 5, 0})
	require.Equal(t, []scheduleResult{
		{Workload: "w", Schedule: "device", MedianMs: 3, VsDevice: 1, KernelSteps: 5},
		{Workload: "w", Schedule: "a", MedianMs: 6, VsDevice: 2, KernelSteps: 5},
	}, res)
}

func TestOutputTolerance(t *testing.T) {
	want := []float32{0.5, -4, 2}
	require.Equal(t, modelTolerance, outputTolerance(false, want))
	require.InDelta(t, 4*ops.Float16ModelTolerance, outputTolerance(true, want), 1e-12)
}
