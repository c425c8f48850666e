package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ConfigFile is the name of a model's optional configuration file in its
// folder of a repository.
const ConfigFile = "config.json"

// ModelConfig configures one model of the repository. In a repository
// folder, a model's config.json holds these fields by their JSON names.
type ModelConfig struct {
	// Name is the model's name in requests (default: its file or folder
	// name without extension).
	Name string `json:"name"`
	// Version is the model's one version (default "1").
	Version string `json:"version"`
	// Path is the model file (.onnx, or an ONNX zip archive).
	Path string `json:"path"`
	// Device is where it runs (onnxvk.WithDevice; default "auto").
	Device string `json:"device"`
	// Precision is "fp32" (the default), "fp16" (onnxvk.WithFP16) or
	// "fp16-weights" (onnxvk.WithFP16Weights).
	Precision string `json:"precision"`
	// MaxBatchSize is the largest batch dimension a merged Run may have;
	// 0 or 1 turns dynamic batching off. With batching on, a request of
	// more rows fails with INVALID_ARGUMENT, as on Triton.
	MaxBatchSize int `json:"max_batch_size"`
	// MaxQueueDelay is how long the first request of a batch may wait for
	// others to join it.
	MaxQueueDelay Duration `json:"max_queue_delay"`
	// Instances is how many Runs of the model may be in flight at once
	// (default 1).
	Instances int `json:"instance_count"`
	// QueueSize bounds the requests waiting to run (default 64): beyond
	// it, a request fails with RESOURCE_EXHAUSTED.
	QueueSize int `json:"queue_size"`
}

// DefaultQueueSize and DefaultVersion are the defaults of ModelConfig.
const (
	DefaultQueueSize = 64
	DefaultVersion   = "1"
)

func (c ModelConfig) withDefaults() ModelConfig {
	if c.Version == "" {
		c.Version = DefaultVersion
	}
	if c.Instances <= 0 {
		c.Instances = 1
	}
	if c.QueueSize <= 0 {
		c.QueueSize = DefaultQueueSize
	}
	return c
}

// Duration is a time.Duration written in JSON as Go writes durations
// ("5ms", "1.5s").
type Duration time.Duration

// String formats the duration as time.Duration does.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration string such as "5ms".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"5ms\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Repository returns the configurations of the models at paths: a model
// file is one model, named after its file; a folder holding a model (an
// .onnx or .zip file, or a config.json) is one model named after the
// folder (as KServe's storage initializer lays out /mnt/models); any
// other folder is a repository whose subfolders each hold one model (its
// one .onnx or .zip file, or the file config.json's path names) and
// optionally a config.json. base fills what a config file leaves unset;
// its Name names the one model of a single file or model folder.
func Repository(paths []string, base ModelConfig) ([]ModelConfig, error) {
	var out []ModelConfig
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
		if !fi.IsDir() {
			c := base
			c.Path = p
			if c.Name == "" || len(paths) > 1 {
				c.Name = stem(p)
			}
			out = append(out, c)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
		if isModelFolder(p) {
			c, err := folderModel(p, base)
			if err != nil {
				return nil, err
			}
			if base.Name != "" && len(paths) == 1 {
				c.Name = base.Name
			}
			out = append(out, c)
			continue
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			c, err := folderModel(filepath.Join(p, e.Name()), base)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("serve: repository %s has no model folders", p)
		}
	}
	return out, nil
}

// folderModel reads one model folder of a repository.
func folderModel(dir string, base ModelConfig) (ModelConfig, error) {
	c := base
	c.Name, c.Path = filepath.Base(dir), ""
	b, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return c, fmt.Errorf("serve: %w", err)
	default:
		d := json.NewDecoder(strings.NewReader(string(b)))
		d.DisallowUnknownFields()
		if err := d.Decode(&c); err != nil {
			return c, fmt.Errorf("serve: %s: %w", filepath.Join(dir, ConfigFile), err)
		}
	}
	if c.Path != "" {
		if !filepath.IsAbs(c.Path) {
			c.Path = filepath.Join(dir, c.Path)
		}
		return c, nil
	}
	var found []string
	for _, pat := range []string{"*.onnx", "*.zip"} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		found = append(found, m...)
	}
	if len(found) != 1 {
		return c, fmt.Errorf("serve: model folder %s has %d .onnx or .zip files; name the model with \"path\" in its %s", dir, len(found), ConfigFile)
	}
	c.Path = found[0]
	return c, nil
}

// isModelFolder reports whether dir holds a model rather than model
// folders.
func isModelFolder(dir string) bool {
	for _, pat := range []string{"*.onnx", "*.zip", ConfigFile} {
		if m, _ := filepath.Glob(filepath.Join(dir, pat)); len(m) > 0 {
			return true
		}
	}
	return false
}

// stem is a file's name without folder and extension.
func stem(p string) string {
	b := filepath.Base(p)
	return strings.TrimSuffix(b, filepath.Ext(b))
}
