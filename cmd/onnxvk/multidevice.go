package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/onnxvk/onnxvk"
)

// multiDeviceFlags are the --config and --devices flags of the commands
// that run or plan a model with IR 11 multi-device annotations.
type multiDeviceFlags struct {
	config, devices *string
}

func addMultiDeviceFlags(fs *flag.FlagSet) multiDeviceFlags {
	return multiDeviceFlags{
		config:  fs.String("config", "", "IR 11 device configuration whose pipeline stages place the nodes, by `NAME` (default: the model's first)"),
		devices: fs.String("devices", "", "map the configuration's logical devices, in order, onto `LIST`: comma-separated cpu, vulkan or vulkan:N, e.g. vulkan:0,vulkan:0"),
	}
}

// options returns the session options the flags ask for.
func (f multiDeviceFlags) options() []onnxvk.Option {
	var opts []onnxvk.Option
	if *f.config != "" {
		opts = append(opts, onnxvk.WithConfiguration(*f.config))
	}
	if *f.devices != "" {
		opts = append(opts, onnxvk.WithDeviceMapping(strings.Split(*f.devices, ",")))
	}
	return opts
}

// printMultiDevice says which configuration is in force, what its logical
// devices map onto and why they share devices; nothing without one.
func printMultiDevice(w io.Writer, sess *onnxvk.Session) {
	md := sess.MultiDevice()
	if md.Configuration == "" {
		return
	}
	fmt.Fprintf(w, "device configuration %q: %s", md.Configuration, sess.Device())
	if len(md.Others) > 0 {
		fmt.Fprintf(w, " (not applied: %s)", strings.Join(md.Others, ", "))
	}
	fmt.Fprintln(w)
	for _, n := range md.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}
