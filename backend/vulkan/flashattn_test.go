package vulkan

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/planner"
)

// TestFlashAttention runs every Attention case of the kernel-test table
// (those of kerneltest's flashAttentionCases cross each tile edge of
// flashattn.comp) on the default device, in fp32 and in the Float16 mode
// (where the softmax's input and output are rounded to float16, the
// kernel's two-pass form), unsampled, and checks that every case whose
// scores are no output runs on flashattn.comp, not on attention.comp.
func TestFlashAttention(t *testing.T) {
	base := openTest(t)
	for _, mode := range []kerneltest.Mode{kerneltest.FP32, kerneltest.Float16} {
		t.Run(mode.String(), func(t *testing.T) {
			if mode == kerneltest.Float16 && !base.half.storage {
				testenv.Skip(t, base.Decline(planner.Query{Inputs: []*graph.Type{graph.TensorType(graph.Float16, graph.ShapeOf(1))}}))
			}
			declines := "vulkan"
			if mode == kerneltest.Float16 {
				declines = "vulkan-float16"
			}
			flash := 0
			only := func(c kerneltest.Case) bool {
				if c.Node.OpType != "Attention" {
					return false
				}
				l, ok := lower(c.Query(), base.caps())
				qk := len(c.Node.Outputs) > 3 && c.Node.Outputs[3] != ""
				switch {
				case !ok:
					t.Errorf("%v: not lowered", c)
				case !qk && !strings.HasPrefix(l.shader, "flashattn"):
					t.Errorf("%v: lowered to %s, not flashattn", c, l.shader)
				case !qk:
					flash++
				}
				return true
			}
			kerneltest.Suite{Device: base, Mode: mode, Declines: declines, Only: only}.Run(t)
			if flash < 100 {
				t.Errorf("%d cases on flashattn.comp, want the table's sweep of at least 100", flash)
			}
		})
	}
}

// TestAttentionTiming times Attention over Q, K and V of [1, 8, 512, 64]
// (and the same with is_causal) on flashattn.comp and on attention.comp,
// alternating run by run: the median device time of 11 Runs each, from
// timestamp queries where the device has them.
func TestAttentionTiming(t *testing.T) {
	testenv.SkipUnlessEnv(t, "ONNXVK_ATTN_TIMING", "times the Attention kernels")
	const runs = 11
	shape := []int64{1, 8, 512, 64}
	r := rand.New(rand.NewPCG(1, 2))
	for _, causal := range []int64{0, 1} {
		n := kerneltest.Node("Attention", []string{"q", "k", "v"}, kerneltest.IntAttr("is_causal", causal))
		g := graph.NewGraph("attention")
		for _, name := range n.Inputs {
			g.Inputs = append(g.Inputs, &graph.ValueInfo{Name: name, Type: graph.TensorType(graph.Float, graph.ShapeOf(shape...))})
		}
		g.Nodes = []*graph.Node{n}
		g.Outputs = []*graph.ValueInfo{{Name: "y"}}
		m := &graph.Model{Name: "attention", IRVersion: 8, Opsets: map[string]int64{"": 23}, Graph: g}
		in := []*graph.Tensor{kerneltest.RandFloats(r, shape, -1, 1), kerneltest.RandFloats(r, shape, -1, 1), kerneltest.RandFloats(r, shape, -1, 1)}
		var run []func() time.Duration
		for _, kernel := range AttentionSchedules() {
			d, err := Open("vulkan", WithSchedule(Schedule{Attention: kernel}))
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			run = append(run, timedRun(t, d, m, in...))
		}
		med := medianTimes(run, 1, runs)
		line := fmt.Sprintf("Attention %v is_causal=%d:", shape, causal)
		for k, kernel := range AttentionSchedules() {
			line += fmt.Sprintf("  %s %.2f ms", kernel, float64(med[k])/1e6)
		}
		t.Logf("%s; rows/flash %.2f", line, float64(med[1])/float64(med[0]))
	}
}
