package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/onnxvk/onnxvk/backend/vulkan"
)

// cmdDevices lists the Vulkan devices, the one "vulkan" chooses (the
// default) and what "auto" runs on, with the reason when that is the CPU.
func cmdDevices(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("devices", "devices [--json]", stdout)
	asJSON := fs.Bool("json", false, "print the devices as JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("no arguments expected, got %s", strings.Join(pos, " "))
	}
	infos, err := vulkan.Devices()
	if err != nil {
		if *asJSON {
			return json.NewEncoder(stdout).Encode(map[string]any{"devices": []any{}, "auto": "cpu", "reason": err.Error()})
		}
		fmt.Fprintf(stdout, "no Vulkan device (%v); models run on the CPU\n", err)
		return nil
	}
	def := vulkan.DefaultIndex(infos)
	auto := "cpu"
	autoIndex, reason := vulkan.AutoIndex(infos)
	if reason == nil {
		auto = fmt.Sprintf("vulkan:%d", infos[autoIndex].Index)
	}
	if *asJSON {
		out := map[string]any{"devices": infos, "default": fmt.Sprintf("vulkan:%d", infos[def].Index), "auto": auto}
		if reason != nil {
			out["reason"] = reason.Error()
		}
		return json.NewEncoder(stdout).Encode(out)
	}
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	for i, d := range infos {
		mark := ""
		if i == def {
			mark = " (default)"
		}
		fmt.Fprintf(stdout, "vulkan:%d%s: %s\n", d.Index, mark, d.Name)
		fmt.Fprintf(stdout, "  type %s, driver %s %s, Vulkan %s\n", d.Type, d.Driver, d.DriverInfo, d.APIVersion)
		var heaps []string
		for _, h := range d.Heaps {
			kind := "host"
			if h.DeviceLocal {
				kind = "device-local"
			}
			heaps = append(heaps, fmt.Sprintf("%.1f GiB %s", float64(h.Size)/(1<<30), kind))
		}
		io := "staged through host-cached memory, copied in each Run's command buffer"
		if d.UnifiedMemory {
			io = "unified memory, mapped directly"
		}
		fmt.Fprintf(stdout, "  memory: %s; inputs and outputs: %s\n", strings.Join(heaps, ", "), io)
		fmt.Fprintf(stdout, "  subgroup size %d; fp16 %s, int8 %s, 16-bit storage %s, 8-bit storage %s\n",
			d.SubgroupSize, yes(d.Float16), yes(d.Int8), yes(d.Storage16Bit), yes(d.Storage8Bit))
		fmt.Fprintf(stdout, "  cooperative matrix %s; timestamps %s", yes(d.CooperativeMatrix), yes(d.Timestamps))
		if d.Timestamps {
			fmt.Fprintf(stdout, " (%g ns per tick)", d.TimestampPeriod)
		}
		fmt.Fprintln(stdout)
	}
	if reason != nil {
		fmt.Fprintf(stdout, "--device auto runs on the CPU: %v\n", reason)
	} else {
		fmt.Fprintf(stdout, "--device auto runs on %s\n", auto)
	}
	return nil
}
