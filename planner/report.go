package planner

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Report is the plan as `onnxvk plan` prints it; its JSON form is stable.
type Report struct {
	Model            string           `json:"model"`
	Steps            []ReportStep     `json:"steps"`
	PeakBytes        int64            `json:"peak_bytes"`
	PeakBytesDevice  map[string]int64 `json:"peak_bytes_per_device"`
	UnsharedBytes    int64            `json:"unshared_bytes"`
	FoldedNodes      int              `json:"folded_nodes"`
	TransferBytes    int64            `json:"transfer_bytes"`
	DynamicValues    int              `json:"dynamic_values"`
	ComputeSteps     int              `json:"compute_steps"`
	TransferSteps    int              `json:"transfer_steps"`
	StepsByDevice    map[string]int   `json:"steps_per_device"`
	TotalWeightBytes int64            `json:"weight_bytes"`
	// Configuration is the IR 11 device configuration that placed the
	// steps, and OtherConfigurations the model's others, not applied.
	Configuration       string   `json:"configuration,omitempty"`
	OtherConfigurations []string `json:"other_configurations,omitempty"`
	// Notes say how the plan applies the model's multi-device annotations.
	Notes []string `json:"notes,omitempty"`
}

// ReportStep is one step of a Report. Compute steps have Node, Op, Device
// and Outputs; transfer steps have Value, From, To and Bytes. Under a
// device configuration, a compute step's Device is its logical device
// ("d0", ...) and Physical the device that runs it ("vulkan:0", "cpu").
type ReportStep struct {
	Node     string         `json:"node,omitempty"`
	Op       string         `json:"op,omitempty"`
	Device   string         `json:"device,omitempty"`
	Physical string         `json:"physical,omitempty"`
	Outputs  []ReportBuffer `json:"outputs,omitempty"`
	Value    string         `json:"value,omitempty"`
	From     string         `json:"from,omitempty"`
	To       string         `json:"to,omitempty"`
	Bytes    *int64         `json:"bytes,omitempty"`
	// Comm is the kind of a communication step that applying sharding
	// specs inserted (CommScatter, CommGather, CommAllReduce); Bytes is
	// then the size of what it makes. Shard says which run of a model
	// node over one shard a compute step is.
	Comm  string `json:"comm,omitempty"`
	Shard *Shard `json:"shard,omitempty"`
	// Declined lists the devices ahead of Device that declined the node,
	// and why.
	Declined []Declined `json:"declined,omitempty"`
	// Devices are the logical devices whose shards a communication step
	// joins (gather, all-reduce) or cuts for (scatter); in JSON they take
	// the place of Device, as a list, and Physical says where the step
	// runs.
	Devices []string `json:"-"`
}

// MarshalJSON writes s, with "device" a list where s.Devices is set.
func (s ReportStep) MarshalJSON() ([]byte, error) {
	type plain ReportStep
	if len(s.Devices) == 0 {
		return json.Marshal(plain(s))
	}
	return json.Marshal(struct {
		plain
		Device []string `json:"device"`
	}{plain(s), s.Devices})
}

// ReportBuffer is a step output: its type, and its arena slot when it has
// one (Offset and Bytes are -1 for values allocated on their own).
type ReportBuffer struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Offset  int64  `json:"offset"`
	Bytes   int64  `json:"bytes"`
	AliasOf string `json:"alias_of,omitempty"`
	// PartOf names the Concat output whose buffer holds this value (see
	// BufferPart).
	PartOf string `json:"part_of,omitempty"`
}

// Report summarises the plan.
func (p *Plan) Report() *Report {
	r := &Report{Model: p.Model.Name, PeakBytes: p.PeakBytes(), PeakBytesDevice: p.ArenaBytes,
		UnsharedBytes: p.UnsharedBytes, FoldedNodes: p.Folded, StepsByDevice: map[string]int{}, Notes: p.Notes}
	if p.Stages != nil {
		r.Configuration = p.Stages.Configuration
		r.OtherConfigurations = OtherConfigurations(p.Model, r.Configuration)
	}
	for _, t := range p.Constants {
		r.TotalWeightBytes += int64(len(t.Data))
	}
	for _, st := range p.Steps {
		if st.Kind == Transfer {
			b := st.Bytes
			r.Steps = append(r.Steps, ReportStep{Value: p.Values[st.In[0]], From: st.From, To: st.To, Bytes: &b})
			r.TransferSteps++
			r.TransferBytes += max(b, 0)
			continue
		}
		rs := ReportStep{Node: st.Node.Name, Op: st.Node.OpType, Device: st.Device, Declined: st.Declined}
		if c, ok := p.comm(st.Node); ok {
			b := max(p.byteSize(st.Out[0]), 0)
			rs.Comm, rs.Bytes = c.Kind, &b
			for _, d := range c.Devices {
				rs.Devices = append(rs.Devices, LogicalName(d))
			}
			rs.Physical = st.Device
		}
		if sh, ok := p.Shards[st.Node.Name]; ok {
			rs.Shard = &sh
		}
		if st.Logical != "" {
			rs.Device, rs.Physical = st.Logical, p.physical(st)
		}
		for _, v := range st.Out {
			if v < 0 {
				continue
			}
			rb := ReportBuffer{Name: p.Values[v], Type: p.Types[v].String(), Offset: -1, Bytes: -1}
			if b, ok := p.Buffers[v]; ok {
				rb.Offset, rb.Bytes = b.Offset, b.Size
				if b.AliasOf >= 0 {
					rb.AliasOf = p.Values[b.AliasOf]
				}
				if b.Part != nil {
					rb.PartOf = p.Values[b.Part.Of]
				}
			} else if p.byteSize(v) < 0 {
				r.DynamicValues++
			}
			rs.Outputs = append(rs.Outputs, rb)
		}
		r.Steps = append(r.Steps, rs)
		r.ComputeSteps++
		r.StepsByDevice[st.Device]++
	}
	return r
}

// WriteText prints the report as a table followed by the memory summary.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tdevice\top\tnode\toutputs\tdeclined by")
	for i, s := range r.Steps {
		if s.Op == "" {
			fmt.Fprintf(tw, "%d\t%s→%s\ttransfer\t%s\t%s\n", i, s.From, s.To, s.Value, sizeString(*s.Bytes))
			continue
		}
		outs := make([]string, len(s.Outputs))
		for k, o := range s.Outputs {
			where := "own"
			switch {
			case o.AliasOf != "":
				where = "view of " + o.AliasOf
			case o.PartOf != "":
				where = fmt.Sprintf("@%d+%s in %s", o.Offset, sizeString(o.Bytes), o.PartOf)
			case o.Offset >= 0:
				where = fmt.Sprintf("@%d+%s", o.Offset, sizeString(o.Bytes))
			}
			outs[k] = fmt.Sprintf("%s %s (%s)", o.Name, o.Type, where)
		}
		op := s.Op
		if s.Comm != "" {
			op += " (" + s.Comm + ")"
		}
		dev := s.Device
		if len(s.Devices) > 0 {
			dev = strings.Join(s.Devices, ",")
		}
		if s.Physical != "" {
			dev += " (" + s.Physical + ")"
		}
		declined := make([]string, len(s.Declined))
		for k, d := range s.Declined {
			declined[k] = d.Device + ": " + d.Reason
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", i, dev, op, s.Node, strings.Join(outs, ", "), strings.Join(declined, "; "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d compute steps, %d transfers (%s), %d nodes folded into constants\n",
		r.ComputeSteps, r.TransferSteps, sizeString(r.TransferBytes), r.FoldedNodes)
	for dev, b := range r.PeakBytesDevice {
		fmt.Fprintf(w, "arena %s: %s\n", dev, sizeString(b))
	}
	ratio := 0.0
	if r.UnsharedBytes > 0 {
		ratio = float64(r.PeakBytes) / float64(r.UnsharedBytes)
	}
	if _, err := fmt.Fprintf(w, "peak arena bytes %d (%s), without reuse %d (%s): %.1f%%; weights %s\n",
		r.PeakBytes, sizeString(r.PeakBytes), r.UnsharedBytes, sizeString(r.UnsharedBytes), 100*ratio, sizeString(r.TotalWeightBytes)); err != nil {
		return err
	}
	if r.Configuration != "" {
		fmt.Fprintf(w, "device configuration %q", r.Configuration)
		if len(r.OtherConfigurations) > 0 {
			fmt.Fprintf(w, " (not applied: %s)", strings.Join(r.OtherConfigurations, ", "))
		}
		fmt.Fprintln(w)
	}
	for _, n := range r.Notes {
		if _, err := fmt.Fprintf(w, "note: %s\n", n); err != nil {
			return err
		}
	}
	return nil
}

// physical names what compute step st runs on under Stages: the host when
// the step fell back to it, else its logical device's physical device.
func (p *Plan) physical(st Step) string {
	if st.Device == HostDevice {
		return HostDevice
	}
	for k, phys := range p.Stages.Physical {
		if LogicalName(k) == st.Logical {
			return phys
		}
	}
	return st.Device
}

func sizeString(b int64) string {
	switch {
	case b < 0:
		return "dynamic"
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}
