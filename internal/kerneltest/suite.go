package kerneltest

import (
	"embed"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// Named is a case of the table with its op and its name: the op
// (prefixed by its domain), then Case.String, with " #k" added to the
// k-th case (from 2) of a name already taken.
type Named struct {
	Name string
	Op   Op
	Case
}

// Cases returns the cases of every op of Table, in order, with inputs
// drawn from a generator seeded by the op's name (the same cases every
// time) and each node's domain set to its op's. The cases are built once
// a process (drawing their inputs costs a tenth of a second, and a
// package's tests run the table in many suites): each call returns its
// own nodes and argument lists, which planning may fill in, over input
// tensors that every call shares and that nothing may write
// (CheckCasesUnchanged).
func Cases() []Named {
	cs := slices.Clone(built())
	for i := range cs {
		n := *cs[i].Node
		n.Inputs, n.Outputs = slices.Clone(n.Inputs), slices.Clone(n.Outputs)
		n.Attrs, n.Metadata = maps.Clone(n.Attrs), maps.Clone(n.Metadata)
		cs[i].Node, cs[i].Args = &n, slices.Clone(cs[i].Args)
	}
	return cs
}

// built returns the cases Cases hands out copies of.
var built = sync.OnceValue(buildCases)

// buildCases builds the cases of every op of Table.
func buildCases() []Named {
	var out []Named
	taken := map[string]int{}
	for _, e := range Table {
		h := fnv.New64a()
		h.Write([]byte(e.String()))
		r := rand.New(rand.NewPCG(h.Sum64(), 1))
		for _, c := range e.Cases(e.Op, r) {
			c.Node.Domain = e.Domain
			name := e.String() + " " + c.String()
			if taken[name]++; taken[name] > 1 {
				name += fmt.Sprintf(" #%d", taken[name])
			}
			out = append(out, Named{name, e, c})
		}
	}
	return out
}

// CheckCasesUnchanged fails t where the input tensors that Cases shares
// differ from freshly drawn ones: a device or kernel wrote into one.
// Suites that run the table call it when they are done.
func CheckCasesUnchanged(t *testing.T) {
	t.Helper()
	fresh := buildCases()
	for i, c := range built() {
		for j, a := range c.Args {
			b := fresh[i].Args[j].T
			if a.T != nil && (!slices.Equal(a.T.Data, b.Data) || !slices.Equal(a.T.Strings, b.Strings)) {
				t.Errorf("%s: input %d was written to", c.Name, j)
			}
		}
	}
}

// Suite runs the table on one device in one mode.
type Suite struct {
	// Device is the device under test.
	Device backend.Device
	// Mode is the arithmetic Device runs in. In the Float16 mode the
	// suite runs the cases of float32 tensors, made float16 (see
	// Float16Case); Only sees them so.
	Mode Mode
	// Declines names the committed list of the cases Device declines,
	// declines/NAME.txt: lines "case name | reason" ('#' starts a
	// comment line). A case Device declines that the list lacks fails, so
	// does a listed case Device runs, and a listed name that is no case.
	Declines string
	// Only, when set, picks the cases to run: those a forced schedule
	// changes, say.
	Only func(Case) bool
	// Sample, when set, picks which of the cases Only picks run: every
	// n-th outside the long suites (testenv.NewSampler), all of them with
	// ONNXVK_LONG=1. Suites that share one Sampler split its share of the
	// cases between them. Nil runs every case.
	Sample *testenv.Sampler
}

//go:embed declines/*.txt
var declineFiles embed.FS

// Declines reads declines/NAME.txt: each listed case name with the
// reason the device NAME declines it.
func Declines(name string) (map[string]string, error) {
	data, err := declineFiles.ReadFile("declines/" + name + ".txt")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c, why, ok := strings.Cut(line, " | ")
		if !ok || strings.TrimSpace(why) == "" {
			return nil, fmt.Errorf("declines/%s.txt:%d: want \"case name | reason\"", name, i+1)
		}
		if _, dup := out[c]; dup {
			return nil, fmt.Errorf("declines/%s.txt:%d: %q listed twice", name, i+1, c)
		}
		out[c] = strings.TrimSpace(why)
	}
	return out, nil
}

// Run runs the suite's cases, each as a subtest of its op's: the device's
// outputs compared with the CPU reference kernels' (Compare), a decline
// checked against the list.
func (s Suite) Run(t *testing.T) {
	t.Helper()
	listed, err := Declines(s.Declines)
	if err != nil {
		t.Fatal(err)
	}
	cases := Cases()
	// wide holds, in the Float16 mode, the case of the fp32 reference of
	// each picked one.
	var picked []Named
	var wide []Case
	for _, c := range cases {
		ref := c.Case
		if s.Mode == Float16 {
			var ok bool
			if c.Case, ref, ok = Float16Case(c.Case); !ok {
				continue
			}
		}
		if (s.Only == nil || s.Only(c.Case)) && (s.Sample == nil || s.Sample.Take()) {
			picked, wide = append(picked, c), append(wide, ref)
		}
	}
	var declined, failed int
	for start := 0; start < len(picked); {
		op := picked[start].Op.String()
		end := start + 1
		for end < len(picked) && picked[end].Op.String() == op {
			end++
		}
		t.Run(op, func(t *testing.T) {
			for i, c := range picked[start:end] {
				if !t.Run(c.Name, func(t *testing.T) {
					got, ok := RunOn(t, s.Device, c.Case)
					why, isListed := listed[c.Name]
					switch {
					case !ok && !isListed:
						t.Errorf("%s declines it, and declines/%s.txt does not list it: make the device take it, or list it with the reason", s.Device.Name(), s.Declines)
					case ok && isListed:
						t.Errorf("%s runs it, and declines/%s.txt lists it (%s): remove it from the list", s.Device.Name(), s.Declines, why)
					}
					if !ok {
						declined++
						return
					}
					Compare(t, c.Name, c.Case, s.Mode, got, Reference(t, wide[start+i]))
				}) {
					failed++
				}
			}
		})
		start = end
	}
	names := map[string]bool{}
	for _, c := range cases {
		names[c.Name] = true
	}
	for c := range listed {
		if !names[c] {
			t.Errorf("declines/%s.txt lists %q, which is no case of the table", s.Declines, c)
		}
	}
	t.Logf("%s, %s: %d of %d cases run, %d declined, %d failed", s.Device.Name(), s.Mode, len(picked), len(cases), declined, failed)
}
