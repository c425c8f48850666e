package vulkan

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"unsafe"

	"github.com/onnxvk/onnxvk/backend/vulkan/internal/vk"
)

// PipelineCacheEnv names the environment variable that chooses the folder
// of the pipeline cache files (default: onnxvk/pipelines in
// os.UserCacheDir); the value "off" keeps each device's pipeline cache in
// memory, neither read nor written.
const PipelineCacheEnv = "ONNXVK_PIPELINE_CACHE"

// maxPipelineCacheBytes is the size of the largest pipeline cache file
// read or written.
const maxPipelineCacheBytes = 256 << 20

// pipelineCache is a device's VkPipelineCache, loaded at Open from the
// file of its device and driver and saved there at Close.
type pipelineCache struct {
	// handle is the VkPipelineCache; 0 when the driver made none.
	handle uintptr
	// path is the cache file; "" when the cache stays in memory.
	path string
	// header is what the device's cache data must start with.
	header vk.PipelineCacheHeaderVersionOne
	// loaded is the size of the file's data the driver took (0: none)
	// and loadedSum its SHA-256.
	loaded    int
	loadedSum [sha256.Size]byte
	// created reports pipelines created through the cache since Open.
	created bool
}

// cacheHeader returns the pipeline cache header of the device that p
// describes.
func cacheHeader(p *vk.PhysicalDeviceProperties) vk.PipelineCacheHeaderVersionOne {
	return vk.PipelineCacheHeaderVersionOne{HeaderSize: uint32(unsafe.Sizeof(vk.PipelineCacheHeaderVersionOne{})),
		HeaderVersion: vk.HeaderVersionOne, VendorID: p.VendorID, DeviceID: p.DeviceID, PipelineCacheUUID: p.PipelineCacheUUID}
}

// pipelineCachePath returns the cache file of a device with the given
// header and driver version, in the folder PipelineCacheEnv names; "" when
// the cache is off or there is no user cache folder.
func pipelineCachePath(h vk.PipelineCacheHeaderVersionOne, driverVersion uint32) string {
	dir := os.Getenv(PipelineCacheEnv)
	switch dir {
	case "off":
		return ""
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(base, "onnxvk", "pipelines")
	}
	name := fmt.Sprintf("%08x-%08x-%08x-%x.bin", h.VendorID, h.DeviceID, driverVersion, h.PipelineCacheUUID)
	return filepath.Join(dir, name)
}

// validCacheData reports whether data is pipeline cache data for the
// device whose header is want.
func validCacheData(data []byte, want vk.PipelineCacheHeaderVersionOne) bool {
	var h vk.PipelineCacheHeaderVersionOne
	if _, err := binary.Decode(data, binary.LittleEndian, &h); err != nil {
		return false
	}
	return h == want && len(data) <= maxPipelineCacheBytes
}

// readCacheFile returns the contents of the cache file at path when it
// holds cache data for the device whose header is want; nil when it is
// missing, unreadable, too large or anything else.
func readCacheFile(path string, want vk.PipelineCacheHeaderVersionOne) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() > maxPipelineCacheBytes {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxPipelineCacheBytes+1))
	if err != nil || !validCacheData(data, want) {
		return nil
	}
	return data
}

// openPipelineCache creates d's pipeline cache from its file, or empty
// when the file is missing or not for this device and driver, or when the
// driver refuses its contents. Where the driver makes no pipeline cache
// at all, pipelines are created without one.
func (d *Device) openPipelineCache() {
	c := &d.cache
	c.header = d.info.cacheHeader
	c.path = pipelineCachePath(c.header, d.info.driverVersion)
	var data []byte
	if c.path != "" {
		data = readCacheFile(c.path, c.header)
	}
	if data != nil {
		var pin runtime.Pinner
		defer pin.Unpin()
		pin.Pin(&data[0])
		ci := &vk.PipelineCacheCreateInfo{SType: vk.StructureTypePipelineCacheCreateInfo,
			InitialDataSize: uintptr(len(data)), PInitialData: unsafe.Pointer(&data[0])}
		if vk.CreatePipelineCache(d.dev, ci, &c.handle) == nil {
			c.loaded, c.loadedSum = len(data), sha256.Sum256(data)
			return
		}
	}
	ci := &vk.PipelineCacheCreateInfo{SType: vk.StructureTypePipelineCacheCreateInfo}
	if vk.CreatePipelineCache(d.dev, ci, &c.handle) != nil {
		c.handle = 0
	}
}

// save writes the pipeline cache's data to its file, atomically (a
// temporary file renamed over it, so that a concurrent reader sees the old
// file or the new one and concurrent writers leave the last one's), when
// pipelines were created since Open and the data differs from what was
// loaded.
func (c *pipelineCache) save(dev uintptr) error {
	if c.handle == 0 || c.path == "" || !c.created {
		return nil
	}
	data, err := vk.GetPipelineCacheData(dev, c.handle)
	if err != nil {
		return fmt.Errorf("vulkan: vkGetPipelineCacheData: %w", err)
	}
	if !validCacheData(data, c.header) || len(data) == c.loaded && sha256.Sum256(data) == c.loadedSum {
		return nil
	}
	dir := filepath.Dir(c.path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, filepath.Base(c.path)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), c.path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
