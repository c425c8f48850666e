package vulkan

import (
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// TestDepthwiseConv runs the depthwise Conv and FusedConv cases of the
// kernel-test table (one input channel per group, one or two spatial
// axes: kerneltest's depthwiseShapes, which cross dwconv.comp's tile
// edges, and the table's other such convolutions) on the default device
// with the "depthwise" schedule (a GPU's own choice, which lavapipe does
// not make) in fp32 and in the Float16 mode, and checks that each lowers
// to dwconv.comp but the two (Conv and FusedConv) whose input patch does
// not fit its shared memory, which lower to conv.comp, as every one does
// under the "direct" schedule; and that the device's own schedule
// lowers them to dwconv.comp on GPUs only. Every case is lowered and
// checked; a third of them run outside the long suites.
func TestDepthwiseConv(t *testing.T) {
	base := openTest(t)
	d := openTest(t, WithSchedule(Schedule{Conv: "depthwise"}))
	direct := capsOf(t, base, false, Schedule{Conv: "direct"})
	gpu := base.info.Type != "cpu"
	isDW := func(l *launch) bool { return strings.HasPrefix(l.shader, "dwconv") }
	for _, mode := range []kerneltest.Mode{kerneltest.FP32, kerneltest.Float16} {
		t.Run(mode.String(), func(t *testing.T) {
			declines := modeDeclines(t, base, mode)
			dw, fallback := 0, 0
			only := func(c kerneltest.Case) bool {
				if c.Node.OpType != "Conv" && c.Node.OpType != "FusedConv" {
					return false
				}
				if x, w := c.Args[0].T.Shape, c.Args[1].T.Shape; len(x) > 4 || w[1] != 1 {
					return false
				}
				l, ok := lower(c.Query(), d.caps())
				switch {
				case !ok:
					t.Errorf("%v: not lowered", c)
				case isDW(l):
					dw++
				case strings.HasPrefix(l.shader, "conv"):
					fallback++
				default:
					t.Errorf("%v: lowered to %s, not dwconv", c, l.shader)
				}
				if own, ok := lower(c.Query(), base.caps()); ok && isDW(own) != (gpu && isDW(l)) {
					t.Errorf("%v: the device's own schedule lowers it to %s (GPU %v)", c, own.shader, gpu)
				}
				if l, ok := lower(c.Query(), direct); !ok || !strings.HasPrefix(l.shader, "conv") {
					t.Errorf("%v: the direct schedule lowers it to %v (%v), not conv", c, l, ok)
				}
				return true
			}
			kerneltest.Suite{Device: d, Mode: mode, Declines: declines, Only: only, Sample: testenv.NewSampler(3)}.Run(t)
			if dw < 50 || fallback != 2 {
				t.Errorf("%d cases on dwconv.comp and %d on conv.comp, want the table's 50 at least and 2", dw, fallback)
			}
		})
	}
}

// TestDepthwiseTiming times MobileNetV2's depthwise convolutions at batch
// 1 (ONNXVK_CONV_TIMING=1 runs it) on conv.comp and on dwconv.comp: the
// median device time of 20 runs of each shape.
func TestDepthwiseTiming(t *testing.T) {
	testenv.SkipUnlessEnv(t, "ONNXVK_CONV_TIMING", "times convolutions")
	d := openTest(t)
	if !d.Info().Timestamps {
		testenv.Skip(t, d.Info().Name+" has no timestamp queries")
	}
	tiled, dw := d.tiledConv, d.depthwiseConv
	defer func() { d.tiledConv, d.depthwiseConv = tiled, dw }()
	d.tiledConv = false
	for _, s := range []struct{ ch, k, stride, in int64 }{
		{32, 3, 1, 112}, {96, 3, 2, 112}, {144, 3, 1, 56}, {144, 3, 2, 56}, {192, 3, 1, 28}, {576, 3, 1, 14}, {576, 5, 1, 7}, {960, 3, 1, 7},
	} {
		pad := s.k / 2
		c := convCase{[]int64{1, s.ch, s.in, s.in}, []int64{s.ch, 1, s.k, s.k},
			[]*graph.Attribute{kerneltest.IntAttr("group", s.ch), kerneltest.IntsAttr("strides", s.stride, s.stride), kerneltest.IntsAttr("pads", pad, pad, pad, pad)}}
		d.depthwiseConv = false
		direct := convDeviceTime(t, d, c)
		d.depthwiseConv = true
		depthwise := convDeviceTime(t, d, c)
		t.Logf("depthwise %4d ch %dx%d/%d at %3d²: conv.comp %8.1f µs, dwconv.comp %8.1f µs, %.2fx", s.ch, s.k, s.k, s.stride, s.in,
			float64(direct)/1e3, float64(depthwise)/1e3, float64(direct)/float64(depthwise))
	}
}
