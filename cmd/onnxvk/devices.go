package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/onnxvk/onnxvk"
)

// cmdDevices lists the devices (onnxvk.Devices): the Vulkan devices, the
// one "vulkan" chooses (the default) and what "auto" runs on, with the
// reason when that is the CPU.
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
	devices, reason := onnxvk.Devices()
	auto, def := "cpu", ""
	for _, d := range devices {
		if d.Auto {
			auto = d.Name
		}
		if d.Default {
			def = d.Name
		}
	}
	if *asJSON {
		out := map[string]any{"devices": devices, "auto": auto}
		if def != "" {
			out["default"] = def
		}
		if reason != "" {
			out["reason"] = reason
		}
		return json.NewEncoder(stdout).Encode(out)
	}
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	for _, d := range devices {
		if d.Kind == "host" {
			fmt.Fprintf(stdout, "cpu: %s\n", d.Description)
			continue
		}
		mark := ""
		if d.Default {
			mark = " (default)"
		}
		fmt.Fprintf(stdout, "%s%s: %s\n", d.Name, mark, d.Description)
		fmt.Fprintf(stdout, "  type %s, driver %s, Vulkan %s, UUID %s\n", d.Kind, d.Driver, d.APIVersion, d.UUID)
		fmt.Fprintf(stdout, "  memory: %.1f GiB device-local\n", float64(d.MemoryBytes)/(1<<30))
		units := ""
		if len(d.MatrixUnit) == 3 {
			units = fmt.Sprintf(" (float16 products on its %d×%d×%d matrix units)", d.MatrixUnit[0], d.MatrixUnit[1], d.MatrixUnit[2])
		}
		fmt.Fprintf(stdout, "  subgroup size %d; fp16 %s, int8 %s, 16-bit storage %s, cooperative matrix %s%s\n",
			d.SubgroupSize, yes(d.Float16), yes(d.Int8), yes(d.Storage16Bit), yes(d.CooperativeMatrix), units)
	}
	if reason != "" {
		fmt.Fprintf(stdout, "--device auto runs on the CPU: %s\n", reason)
	} else {
		fmt.Fprintf(stdout, "--device auto runs on %s\n", auto)
	}
	return nil
}
