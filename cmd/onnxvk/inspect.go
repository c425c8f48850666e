package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader"
	"github.com/onnxvk/onnxvk/planner"
)

type inspectReport struct {
	Model          string            `json:"model"`
	IRVersion      int64             `json:"ir_version"`
	Producer       string            `json:"producer"`
	Domain         string            `json:"domain,omitempty"`
	ModelVersion   int64             `json:"model_version,omitempty"`
	Doc            string            `json:"doc,omitempty"`
	Opsets         map[string]int64  `json:"opsets"`
	Metadata       map[string]string `json:"metadata,omitempty"`
	Inputs         []inspectValue    `json:"inputs"`
	Outputs        []inspectValue    `json:"outputs"`
	Nodes          int               `json:"nodes"`
	Ops            []opCount         `json:"ops"`
	Parameters     int64             `json:"parameters"`
	ParameterBytes int64             `json:"parameter_bytes"`
	ExternalFiles  []string          `json:"external_files,omitempty"`
	Warnings       []string          `json:"warnings,omitempty"`
	Configurations []string          `json:"device_configurations,omitempty"`
	AnnotatedNodes int               `json:"annotated_nodes,omitempty"`
	// AnnotationError says what is wrong with the multi-device
	// annotations, which a session would refuse to load.
	AnnotationError string `json:"annotation_error,omitempty"`
}

type inspectValue struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

type opCount struct {
	Op    string `json:"op"`
	Count int    `json:"count"`
}

func cmdInspect(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("inspect", "inspect MODEL [--json]", stdout)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	path, err := oneModel(pos)
	if err != nil {
		return err
	}
	m, err := loader.Load(path)
	if err != nil {
		return err
	}
	defer m.Close()
	r := inspectModel(m)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	printInspect(stdout, r)
	return nil
}

func inspectModel(m *graph.Model) *inspectReport {
	g := m.Graph
	producer := strings.TrimSpace(m.ProducerName + " " + m.ProducerVersion)
	r := &inspectReport{Model: m.Name, IRVersion: m.IRVersion, Producer: producer, Domain: m.Domain,
		ModelVersion: m.ModelVersion, Doc: m.DocString, Opsets: m.Opsets, Metadata: m.Metadata,
		ExternalFiles: m.ExternalFiles, Warnings: m.Warnings}
	for _, in := range g.Inputs {
		if _, isWeight := g.Initializers[in.Name]; !isWeight {
			r.Inputs = append(r.Inputs, inspectValue{in.Name, in.Type.String()})
		}
	}
	for _, out := range g.Outputs {
		r.Outputs = append(r.Outputs, inspectValue{out.Name, out.Type.String()})
	}
	counts := map[string]int{}
	var walk func(g *graph.Graph)
	walk = func(g *graph.Graph) {
		for _, t := range g.Initializers {
			r.Parameters += t.NumElements()
			r.ParameterBytes += int64(len(t.Data))
		}
		for _, n := range g.Nodes {
			op := n.OpType
			if n.Domain != "" {
				op = n.Domain + "." + op
			}
			counts[op]++
			r.Nodes++
			if len(n.DeviceConfigs) > 0 {
				r.AnnotatedNodes++
			}
			for _, a := range n.Attrs {
				if a.G != nil {
					walk(a.G)
				}
				for _, sg := range a.Graphs {
					walk(sg)
				}
			}
		}
	}
	walk(g)
	for op, n := range counts {
		r.Ops = append(r.Ops, opCount{op, n})
	}
	sort.Slice(r.Ops, func(i, j int) bool {
		if r.Ops[i].Count != r.Ops[j].Count {
			return r.Ops[i].Count > r.Ops[j].Count
		}
		return r.Ops[i].Op < r.Ops[j].Op
	})
	for _, c := range m.Configurations {
		r.Configurations = append(r.Configurations, fmt.Sprintf("%s (%d devices)", c.Name, c.NumDevices))
	}
	if err := planner.CheckDeviceConfigurations(m); err != nil {
		r.AnnotationError = err.Error()
	}
	return r
}

func printInspect(w io.Writer, r *inspectReport) {
	fmt.Fprintf(w, "model      %s\n", r.Model)
	for _, warning := range r.Warnings {
		fmt.Fprintf(w, "warning    %s\n", warning)
	}
	fmt.Fprintf(w, "ir version %d\n", r.IRVersion)
	if r.Producer != "" {
		fmt.Fprintf(w, "producer   %s\n", r.Producer)
	}
	var opsets []string
	for _, d := range sortedKeys(r.Opsets) {
		name := d
		if name == "" {
			name = "ai.onnx"
		}
		opsets = append(opsets, fmt.Sprintf("%s %d", name, r.Opsets[d]))
	}
	fmt.Fprintf(w, "opsets     %s\n", strings.Join(opsets, ", "))
	for _, k := range sortedKeys(r.Metadata) {
		fmt.Fprintf(w, "metadata   %s = %s\n", k, r.Metadata[k])
	}
	fmt.Fprintln(w, "inputs")
	for _, v := range r.Inputs {
		fmt.Fprintf(w, "  %s: %s\n", v.Name, v.Type)
	}
	fmt.Fprintln(w, "outputs")
	for _, v := range r.Outputs {
		fmt.Fprintf(w, "  %s: %s\n", v.Name, v.Type)
	}
	fmt.Fprintf(w, "parameters %d (%.2f MiB)\n", r.Parameters, float64(r.ParameterBytes)/(1<<20))
	fmt.Fprintf(w, "nodes      %d\n", r.Nodes)
	for _, c := range r.Ops {
		fmt.Fprintf(w, "  %-24s %d\n", c.Op, c.Count)
	}
	if len(r.ExternalFiles) > 0 {
		fmt.Fprintf(w, "external data files: %s\n", strings.Join(r.ExternalFiles, ", "))
	}
	if len(r.Configurations) > 0 || r.AnnotatedNodes > 0 {
		fmt.Fprintf(w, "multi-device: configurations %s; %d annotated nodes\n", strings.Join(r.Configurations, ", "), r.AnnotatedNodes)
	} else {
		fmt.Fprintln(w, "multi-device: no annotations")
	}
	if r.AnnotationError != "" {
		fmt.Fprintf(w, "multi-device annotations are invalid: %s\n", r.AnnotationError)
	}
}
