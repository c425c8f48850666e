package onnxvk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/backend/vulkan"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// TestDecoderShapeClasses generates 200 tokens (12 outside the long
// suites) with the decoder on the CPU and on Vulkan, the past length
// growing by one each step: the tokens are PyTorch's, at most 2 plans are
// compiled after the first step (the first decode step's, then the class
// plan with the past length symbolic that serves every later step), and
// the resident set, read after a collection that returns the free heap to
// the system (settledRSS), grows by at most a quarter after warm-up (step
// 10, or in the long suites step 53, after the comparisons below). On
// the CPU the device memory in use does not change; on Vulkan the class
// plan runs the attention (the KV Concat and the fused QKᵀ, mask,
// Softmax, ·V) on the GPU, its logits equal a concrete plan's for the
// same inputs (in the long suites, over 50 steps from the first the
// class plan serves; outside them TestShapeClassMatchesConcretePlans
// compares the two on a smaller model), and its device memory stays within 64 KiB of what it was after
// warm-up: the session gives the past length's largest size (WithDimMax),
// for which the class program sizes its buffers and the caches it keeps
// on the device at its first Run; what still changes are the constants
// each new length binds (the mask's row, the elementwise chains'
// parameters; those of the length 4 bindings before are freed). Prompts
// of other lengths then compile one plan more between them (the class
// with the prompt length symbolic).
func TestDecoderShapeClasses(t *testing.T) {
	steps, compareSteps := 12, 0
	if testenv.Long() {
		steps, compareSteps = 200, 50
	}
	model, prompt, want := decoderModel(t, decoderName(), steps)
	// "vulkan-staging" takes a discrete GPU's paths on any device
	// (vulkan.WithStaging), where an upload through a staging buffer is a
	// submission of its own: the binding's constants must cost none. The
	// short suites' steps, without the comparisons, show that.
	for _, run := range []struct {
		name, dev string
		opts      []onnxvk.Option
		short     bool
	}{{"cpu", "cpu", nil, false}, {"vulkan", "vulkan", nil, false}, {"vulkan-staging", "vulkan", []onnxvk.Option{onnxvk.WithVulkanOptions(vulkan.WithStaging())}, true}} {
		dev := run.dev
		steps, compareSteps, want := steps, compareSteps, want
		if run.short {
			steps, compareSteps = min(steps, 12), 0
			want = want[:steps]
		}
		t.Run(run.name, func(t *testing.T) {
			// The past length reaches len(prompt)+steps-1: its class
			// plan sizes its GPU buffers for that at once.
			sess := loadDecoder(t, model, dev, append(run.opts, onnxvk.WithDimMax("P", int64(len(prompt)+steps)))...)
			var ref *onnxvk.Session
			segments := 0
			if dev == "vulkan" {
				segments = checkClassPlacement(t, sess)
				if compareSteps > 0 {
					ref = loadDecoder(t, model, dev, onnxvk.WithoutShapeClasses())
				}
			}
			var first onnxvk.PlanStats
			var mem, res []string
			// warm is the step after which the memory must stay flat: the
			// 10th, or the first after the comparisons with the concrete
			// plans, whose session is closed by then.
			warm := max(10, 3+compareSteps)
			var memWarm, resWarm, memLast, resLast int64
			changes := 0
			var worst float64
			d := newDecoding(t, sess, prompt, dev == "vulkan")
			defer d.Release()
			var tokens []int64
			var moved, submits []int64
			for step := range steps {
				var wantLogits []float32
				if ref != nil && step >= 2 && step < 2+compareSteps {
					out, err := ref.Run(context.Background(), d.Inputs())
					require.NoError(t, err)
					wantLogits, err = onnxvk.Data[float32](out["logits"])
					require.NoError(t, err)
				}
				if ref != nil && step == 2+compareSteps {
					// Its concrete plans hold memory that the resident
					// set read below would count.
					require.NoError(t, ref.Close())
					ref = nil
				}
				token, did := d.step(t)
				tokens = append(tokens, token)
				if step >= 3 {
					moved = append(moved, did.HostDeviceBytes)
					submits = append(submits, did.Submits)
				}
				if wantLogits != nil {
					got, err := onnxvk.Data[float32](d.Logits)
					require.NoError(t, err)
					require.Len(t, got, len(wantLogits))
					for i := range got {
						worst = max(worst, math.Abs(float64(got[i]-wantLogits[i])))
					}
				}
				switch n := step + 1; {
				case n == 1:
					first = sess.PlanStats()
				case n == warm:
					memWarm, resWarm = sess.DeviceMemoryInUse(), settledRSS()
					memLast = memWarm
				case n > warm:
					if m := sess.DeviceMemoryInUse(); m != memLast {
						changes++
						memLast = m
					}
				}
				if n := step + 1; n == warm || n == 100 || n == steps {
					resLast = settledRSS()
					mem = append(mem, fmt.Sprintf("step %d: %d", n, memLast))
					res = append(res, fmt.Sprintf("step %d: %.1f MB", n, float64(resLast)/1e6))
				}
			}
			require.Equal(t, want, tokens, "tokens against PyTorch's")
			require.LessOrEqual(t, worst, 1e-3, "largest logit difference from a concrete plan's")
			st := sess.PlanStats()
			require.LessOrEqual(t, st.Compiled-first.Compiled, int64(2), "plans compiled after the first step: %+v", st)
			t.Logf("%s: %d steps, plans %+v; device memory %s (%d changes after step %d); RSS %s; largest logit difference from a concrete plan over %d steps: %g",
				dev, steps, st, strings.Join(mem, ", "), changes, warm, strings.Join(res, ", "), compareSteps, worst)
			// The cache at the end: a key and a value tensor per layer,
			// past length len(prompt)+steps-1; the device memory does not
			// grow with it.
			g := geometryOf(t, sess)
			cache := 2 * g.layers * g.heads * g.headDim * 4 * int64(len(prompt)+steps-1)
			require.LessOrEqual(t, memLast-memWarm, int64(64<<10), "device memory growth after step %d (%d Vulkan segments), against a cache of %d bytes", warm, segments, cache)
			require.LessOrEqual(t, resLast, resWarm+resWarm/4, "resident set at step %d and at the end", warm)
			if dev == "vulkan" {
				// The class plan's step is one submission; the cache stays
				// on the GPU, and a step moves the token id in and the
				// logits out, and uploads what the program of its binding
				// computed on the host from the sizes and binds as
				// constants: per layer, the mask's row (P+1 bytes) and
				// the parameters of its elementwise chains, about 1 KiB
				// (bounded here at 2 KiB: the point is that the cache,
				// 2·layers·heads·headDim floats per past position, does
				// not cross).
				for i, n := range moved {
					p := int64(len(prompt) + i + 2)
					require.Equal(t, int64(1), submits[i], "submissions of step %d", i+3)
					require.LessOrEqual(t, n, 8+4096+g.layers*(p+1)+12<<10, "step %d (past length %d) moved %d bytes between host and device", i+3, p, n)
				}
				t.Logf("per step from the third: %d..%d submissions, %d..%d bytes between host and device", slices.Min(submits), slices.Max(submits), slices.Min(moved), slices.Max(moved))
			}
			before := sess.PlanStats().Compiled
			for _, n := range []int{3, 2, 1} {
				generate(t, sess, prompt[:n], 3, false, nil)
			}
			require.LessOrEqual(t, sess.PlanStats().Compiled-before, int64(1), "plans compiled for 3 more prompt lengths")
		})
	}
}

// checkClassPlacement checks that the decoder's class plan for decode
// steps (one new token, the past length symbolic) runs each layer's
// attention on Vulkan (the KV Concat, and both products, the scaling, the
// masking Where and the Softmax fused into one ScaledDotProductAttention,
// whose mask the program computes) and nothing on the host: the Shape
// and Range nodes of the shape computations are the Vulkan program's,
// which computes them once per binding of the past length. The plan with
// every length symbolic (a prompt's class) fuses each layer's attention
// too: its mask's rows are an arange over the prompt length. It returns
// the number of Vulkan segments (runs of consecutive nodes placed there): 1.
func checkClassPlacement(t *testing.T, sess *onnxvk.Session) int {
	t.Helper()
	info, err := sess.PlanInfo(map[string][]int64{"ids": {1, 1}})
	require.NoError(t, err)
	attention := map[string]int{}
	segments, last := 0, ""
	var host []string
	for _, n := range info.Nodes {
		onGPU := strings.HasPrefix(n.Device, "vulkan")
		if onGPU && last != n.Device {
			segments++
		}
		last = n.Device
		if !onGPU {
			host = append(host, n.Op)
			continue
		}
		if strings.HasPrefix(n.Name, "/blocks.") {
			attention[n.Op]++
		}
	}
	layers := int(geometryOf(t, sess).layers)
	for _, op := range []string{"Concat", "ScaledDotProductAttention", "Greater"} {
		require.GreaterOrEqual(t, attention[op], layers, "%s nodes of the layers on Vulkan (on the host: %v)", op, host)
	}
	require.GreaterOrEqual(t, attention["Concat"], 2*layers, "KV Concat nodes on Vulkan")
	require.Zero(t, attention["Softmax"], "Softmax nodes left unfused")
	p, err := sessionvalues.Of(sess).Plan(nil)
	require.NoError(t, err)
	fused := 0
	for _, st := range p.Steps {
		if st.Node != nil && st.Node.OpType == "ScaledDotProductAttention" {
			fused++
		}
	}
	require.Equal(t, layers, fused, "attentions fused with every length symbolic")
	require.Empty(t, host, "nodes on the host")
	require.Equal(t, 1, segments, "Vulkan segments")
	return segments
}

// TestDecoderMatchesORT generates tokens with the decoder on ONNX Runtime
// (onnxruntime-node, through bench/ort/decode.js) and on onnxvk with its
// class plans, on the CPU and on Vulkan: the tokens are the same. It runs
// with ONNXVK_ORT=1 and NODE_PATH naming the node_modules folder that holds
// onnxruntime-node (see bench/ort/README.md).
func TestDecoderMatchesORT(t *testing.T) {
	testenv.SkipUnlessEnv(t, "ONNXVK_ORT", "compares with ONNX Runtime through node")
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Skip(t, fmt.Sprintf("no node: %v", err))
	}
	steps := 20
	if testenv.Long() {
		steps = 200
	}
	model, prompt, _ := decoderModel(t, decoderName(), steps)
	ids := make([]string, len(prompt))
	for i, id := range prompt {
		ids[i] = strconv.FormatInt(id, 10)
	}
	cmd := exec.Command(node, filepath.Join("bench", "ort", "decode.js"), model, "--prompt", strings.Join(ids, ","), "--steps", strconv.Itoa(steps))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err, "node decode.js")
	var ort struct {
		Tokens []int64 `json:"tokens"`
	}
	require.NoError(t, json.Unmarshal(out, &ort))
	for _, dev := range []string{"cpu", "vulkan"} {
		got, _ := generate(t, loadDecoder(t, model, dev), prompt, steps, false, nil)
		require.Equal(t, ort.Tokens, got, "%s tokens against ONNX Runtime's", dev)
	}
}

// TestDecoderStepTimes prints the decoder's median wall and CPU
// milliseconds per decode step with a plan per shape class and with a
// concrete plan per step (WithoutShapeClasses), on the CPU and on Vulkan:
// two generations of 24 steps, one per session, advance in turns, a step
// of one then a step of the other (set ONNXVK_DECODE_TIMES=1).
func TestDecoderStepTimes(t *testing.T) {
	testenv.SkipUnlessEnv(t, "ONNXVK_DECODE_TIMES", "decode step times")
	const steps = 24
	model, prompt, _ := decoderModel(t, "decoder", steps)
	for _, dev := range []string{"cpu", "vulkan"} {
		t.Run(dev, func(t *testing.T) {
			names := []string{"class", "concrete"}
			sessions := []*onnxvk.Session{loadDecoder(t, model, dev), loadDecoder(t, model, dev, onnxvk.WithoutShapeClasses())}
			var runs []greedy
			for _, s := range sessions {
				d := newDecoding(t, s, prompt, false)
				defer d.Release()
				runs = append(runs, d)
			}
			wall, cpu := make([][]time.Duration, 2), make([][]time.Duration, 2)
			for step := range steps {
				for i, d := range runs {
					start, startCPU := time.Now(), cpuTime()
					d.step(t)
					if step > 0 {
						wall[i] = append(wall[i], time.Since(start))
						cpu[i] = append(cpu[i], cpuTime()-startCPU)
					}
				}
			}
			median := func(d []time.Duration) float64 {
				d = slices.Sorted(slices.Values(d))
				return float64(d[len(d)/2].Microseconds()) / 1000
			}
			for _, m := range []struct {
				what string
				d    [][]time.Duration
			}{{"wall", wall}, {"CPU", cpu}} {
				c, k := median(m.d[0]), median(m.d[1])
				t.Logf("median %s ms per decode step, %d steps: %s plans %.2f, %s plans %.2f (%s/%s %.2f)", m.what, steps-1, names[0], c, names[1], k, names[1], names[0], k/c)
			}
			t.Logf("plans: %s %+v, %s %+v", names[0], sessions[0].PlanStats(), names[1], sessions[1].PlanStats())
		})
	}
}

// BenchmarkDecoderBinding times a decode step of the decoders on Vulkan
// on their class plan (the past length symbolic, the caches kept on the
// device), cycling over the inputs of consecutive steps: "new" over one
// more past length than a class program keeps programs for, so that
// every step binds sizes it has not seen (it lowers and compiles the
// segment on the host and records the context's command buffer again),
// "seen" over one past length (nothing is lowered or recorded). Their
// difference is the host's cost of a new binding:
// go test -run '^$' -bench DecoderBinding -count 6 .
func BenchmarkDecoderBinding(b *testing.B) {
	for _, name := range []string{"decoder_small", "decoder"} {
		b.Run(name, func(b *testing.B) {
			model, prompt, _ := decoderModel(b, name, 1)
			sess := loadDecoder(b, model, "vulkan", onnxvk.WithDimMax("P", 64))
			const lengths = 5
			steps, opts := decodeSteps(b, sess, prompt, lengths)
			for _, bench := range []struct {
				name    string
				lengths int
			}{{"new", lengths}, {"seen", 1}} {
				b.Run(bench.name, func(b *testing.B) {
					i := 0
					for b.Loop() {
						out, err := sess.RunWith(context.Background(), steps[i%bench.lengths], opts)
						if err != nil {
							b.Fatal(err)
						}
						for _, t := range out {
							t.Release()
						}
						i++
					}
				})
			}
		})
	}
}

// decodeSteps decodes prompt on sess, the caches kept on the device, and
// returns the inputs of n consecutive decode steps from the third (the
// first the class plan of decode steps serves), each run once, and the
// options that keep a step's caches on the device. The token fed back is
// the prompt's last: the steps' sizes are what matters.
func decodeSteps(b *testing.B, sess *onnxvk.Session, prompt []int64, n int) ([]map[string]*onnxvk.Tensor, onnxvk.RunOptions) {
	b.Helper()
	var opts onnxvk.RunOptions
	in := map[string]*onnxvk.Tensor{}
	for _, x := range sess.Inputs() {
		name, ok := strings.CutPrefix(x.Name, "past.")
		if !ok {
			continue
		}
		opts.KeepOnDevice = append(opts.KeepOnDevice, "present."+name)
		empty, err := onnxvk.NewTensor([]int64{1, x.Shape[1], 0, x.Shape[3]}, []float32{})
		require.NoError(b, err)
		in[x.Name] = empty
	}
	ids, err := onnxvk.NewTensor([]int64{1, int64(len(prompt))}, prompt)
	require.NoError(b, err)
	in["ids"] = ids
	token, err := onnxvk.NewTensor([]int64{1, 1}, prompt[len(prompt)-1:])
	require.NoError(b, err)
	var steps []map[string]*onnxvk.Tensor
	b.Cleanup(func() {
		for _, in := range steps {
			for _, t := range in {
				t.Release()
			}
		}
	})
	for range n + 3 {
		out, err := sess.RunWith(context.Background(), in, opts)
		require.NoError(b, err)
		if len(steps) < 3 {
			for name, t := range in {
				if name != "ids" {
					t.Release()
				}
			}
		}
		steps = append(steps, in)
		in = map[string]*onnxvk.Tensor{"ids": token}
		for name, t := range out {
			if past, ok := strings.CutPrefix(name, "present."); ok {
				in["past."+past] = t
			} else {
				t.Release()
			}
		}
	}
	for _, t := range in {
		if t != token {
			t.Release()
		}
	}
	steps = steps[3:]
	return steps, opts
}
