package onnxvk_test

import (
	"encoding/json"
	"fmt"
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
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// TestDecoderShapeClasses generates 200 tokens (12 outside the long
// suites) with the decoder on the CPU and on Vulkan, the past length
// growing by one each step: the tokens are PyTorch's, at most 2 plans are
// compiled after the first step (the first decode step's, then the class
// plan with the past length symbolic that serves every later step), the
// device memory in use does not change after step 10 and the resident
// set, read after a collection that returns the free heap to the system
// (settledRSS), grows by at most a quarter. Prompts of other lengths then compile
// one plan more between them (the class with the prompt length symbolic).
func TestDecoderShapeClasses(t *testing.T) {
	steps := 12
	if testenv.Long() {
		steps = 200
	}
	model, prompt, want := decoderModel(t, steps)
	for _, dev := range []string{"cpu", "vulkan"} {
		t.Run(dev, func(t *testing.T) {
			sess := loadDecoder(t, model, dev)
			var first onnxvk.PlanStats
			var mem, res []string
			var mem10, res10, memLast, resLast int64
			tokens, _ := generate(t, sess, prompt, steps, false, func(step int) {
				switch step + 1 {
				case 1:
					first = sess.PlanStats()
				case 10:
					mem10, res10 = sess.DeviceMemoryInUse(), settledRSS()
				}
				if n := step + 1; n == 10 || n == 100 || n == steps {
					memLast, resLast = sess.DeviceMemoryInUse(), settledRSS()
					mem = append(mem, fmt.Sprintf("step %d: %d", n, memLast))
					res = append(res, fmt.Sprintf("step %d: %.1f MB", n, float64(resLast)/1e6))
				}
			})
			require.Equal(t, want, tokens, "tokens against PyTorch's")
			st := sess.PlanStats()
			require.LessOrEqual(t, st.Compiled-first.Compiled, int64(2), "plans compiled after the first step: %+v", st)
			require.Equal(t, mem10, memLast, "device memory in use at step 10 and at the end")
			require.LessOrEqual(t, resLast, res10+res10/4, "resident set at step 10 and at the end")
			t.Logf("%s: %d steps, plans %+v; device memory %s; RSS %s", dev, steps, st, strings.Join(mem, ", "), strings.Join(res, ", "))
			before := sess.PlanStats().Compiled
			for _, n := range []int{3, 2, 1} {
				generate(t, sess, prompt[:n], 3, false, nil)
			}
			require.LessOrEqual(t, sess.PlanStats().Compiled-before, int64(1), "plans compiled for 3 more prompt lengths")
		})
	}
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
	model, prompt, _ := decoderModel(t, steps)
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
	model, prompt, _ := decoderModel(t, steps)
	for _, dev := range []string{"cpu", "vulkan"} {
		t.Run(dev, func(t *testing.T) {
			names := []string{"class", "concrete"}
			sessions := []*onnxvk.Session{loadDecoder(t, model, dev), loadDecoder(t, model, dev, onnxvk.WithoutShapeClasses())}
			var runs []*decoding
			for _, s := range sessions {
				d := newDecoding(t, s, prompt, false)
				defer d.release()
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
