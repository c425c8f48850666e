package vulkan

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/backend/vulkan/internal/vk"
)

// ValidationEnv names the environment variable that, set to 1, enables
// VK_LAYER_KHRONOS_validation with synchronization validation on the
// instances this package creates; every message is printed to stderr.
const ValidationEnv = "ONNXVK_VULKAN_VALIDATION"

const validationLayer = "VK_LAYER_KHRONOS_validation"

// instance is the process's VkInstance, shared by every open device and
// kept once created, also while no device is open: creating and destroying
// instances over and over costs each new session the driver's start-up,
// and the NVIDIA driver (580) stops creating instances after about 30 in
// one process. refs counts the open devices.
var instance struct {
	sync.Mutex
	refs             int
	handle           uintptr
	messenger        uintptr
	destroyMessenger uintptr
}

var (
	callbackOnce sync.Once
	callback     uintptr
	// validationMessages counts the messages the validation layer sent.
	validationMessages atomic.Int64
)

// debugCallback is the one debug-utils messenger callback of the process.
func debugCallback(severity, types uint32, data *vk.DebugUtilsMessengerCallbackDataEXT, _ unsafe.Pointer) uint32 {
	validationMessages.Add(1)
	msg := "(no message)"
	if data != nil && data.PMessage != nil {
		var b strings.Builder
		for p := data.PMessage; *(*byte)(p) != 0; p = unsafe.Add(p, 1) {
			b.WriteByte(*(*byte)(p))
		}
		msg = b.String()
	}
	fmt.Fprintf(os.Stderr, "vulkan: validation (severity %#x, type %#x): %s\n", severity, types, msg)
	return 0
}

// acquireInstance returns the shared instance, creating it on first use.
// Every successful call must be paired with releaseInstance.
func acquireInstance() (uintptr, error) {
	if err := vk.Load(); err != nil {
		return 0, fmt.Errorf("vulkan: %w: %w", backend.ErrDeviceUnavailable, err)
	}
	instance.Lock()
	defer instance.Unlock()
	if instance.handle != 0 {
		instance.refs++
		return instance.handle, nil
	}
	validate := os.Getenv(ValidationEnv) == "1"
	var pin runtime.Pinner
	defer pin.Unpin()
	appName := vk.Cstr("onnxvk")
	app := &vk.ApplicationInfo{SType: vk.StructureTypeApplicationInfo, PApplicationName: unsafe.Pointer(&appName[0]),
		PEngineName: unsafe.Pointer(&appName[0]), ApiVersion: vk.MakeAPIVersion(1, 2, 0)}
	ci := &vk.InstanceCreateInfo{SType: vk.StructureTypeInstanceCreateInfo, PApplicationInfo: unsafe.Pointer(app)}
	pin.Pin(app)
	pin.Pin(&appName[0])
	var messengerCI *vk.DebugUtilsMessengerCreateInfoEXT
	if validate {
		if err := checkLayer(validationLayer); err != nil {
			return 0, err
		}
		layer, ext := vk.Cstr(validationLayer), vk.Cstr("VK_EXT_debug_utils")
		layers := []unsafe.Pointer{unsafe.Pointer(&layer[0])}
		exts := []unsafe.Pointer{unsafe.Pointer(&ext[0])}
		enables := []int32{vk.ValidationFeatureEnableSynchronizationValidationEXT}
		callbackOnce.Do(func() { callback = purego.NewCallback(debugCallback) })
		messengerCI = &vk.DebugUtilsMessengerCreateInfoEXT{SType: vk.StructureTypeDebugUtilsMessengerCreateInfoEXT,
			MessageSeverity: vk.DebugUtilsMessageSeverityWarningBitEXT | vk.DebugUtilsMessageSeverityErrorBitEXT,
			MessageType: vk.DebugUtilsMessageTypeGeneralBitEXT | vk.DebugUtilsMessageTypeValidationBitEXT |
				vk.DebugUtilsMessageTypePerformanceBitEXT,
			PfnUserCallback: callback}
		features := &vk.ValidationFeaturesEXT{SType: vk.StructureTypeValidationFeaturesEXT,
			EnabledValidationFeatureCount: 1, PEnabledValidationFeatures: unsafe.Pointer(&enables[0]),
			PNext: unsafe.Pointer(messengerCI)}
		for _, p := range []any{&layer[0], &ext[0], &layers[0], &exts[0], &enables[0], messengerCI, features} {
			pin.Pin(p)
		}
		ci.EnabledLayerCount, ci.PpEnabledLayerNames = 1, unsafe.Pointer(&layers[0])
		ci.EnabledExtensionCount, ci.PpEnabledExtensionNames = 1, unsafe.Pointer(&exts[0])
		ci.PNext = unsafe.Pointer(features)
	}
	pin.Pin(ci)
	var h uintptr
	if err := vk.CreateInstance(unsafe.Pointer(ci), &h); err != nil {
		if errors.Is(err, vk.Result(vk.ErrorIncompatibleDriver)) {
			return 0, fmt.Errorf("vulkan: vkCreateInstance: no Vulkan driver found (install one, e.g. mesa-vulkan-drivers, or check VK_DRIVER_FILES): %w: %w", backend.ErrDeviceUnavailable, err)
		}
		return 0, fmt.Errorf("vulkan: vkCreateInstance: %w: %w", backend.ErrDeviceUnavailable, err)
	}
	instance.handle, instance.messenger, instance.destroyMessenger = h, 0, 0
	if validate {
		create := vk.GetInstanceProcAddr(h, vk.Cstr("vkCreateDebugUtilsMessengerEXT"))
		destroy := vk.GetInstanceProcAddr(h, vk.Cstr("vkDestroyDebugUtilsMessengerEXT"))
		if create == 0 || destroy == 0 {
			vk.DestroyInstance(h)
			return 0, errors.New("vulkan: VK_EXT_debug_utils enabled but vkCreateDebugUtilsMessengerEXT is missing")
		}
		if err := vk.CreateDebugUtilsMessengerEXT(create, h, messengerCI, &instance.messenger); err != nil {
			vk.DestroyInstance(h)
			return 0, fmt.Errorf("vulkan: vkCreateDebugUtilsMessengerEXT: %w", err)
		}
		instance.destroyMessenger = destroy
	}
	instance.refs = 1
	return h, nil
}

// releaseInstance drops one reference to the shared instance, which stays.
func releaseInstance() {
	instance.Lock()
	defer instance.Unlock()
	instance.refs--
}

// destroyInstance destroys the shared instance when no device uses it (the
// next use creates another); the validation layer reports then what was
// not destroyed. It fails when devices are still open.
func destroyInstance() error {
	instance.Lock()
	defer instance.Unlock()
	if instance.refs > 0 {
		return fmt.Errorf("vulkan: %d devices are still open", instance.refs)
	}
	if instance.handle == 0 {
		return nil
	}
	if instance.messenger != 0 {
		vk.DestroyDebugUtilsMessengerEXT(instance.destroyMessenger, instance.handle, instance.messenger)
	}
	vk.DestroyInstance(instance.handle)
	instance.handle, instance.messenger = 0, 0
	return nil
}

func checkLayer(name string) error {
	layers, err := vk.EnumerateInstanceLayerProperties()
	if err != nil {
		return fmt.Errorf("vulkan: vkEnumerateInstanceLayerProperties: %w", err)
	}
	for i := range layers {
		if vk.GoString(layers[i].LayerName[:]) == name {
			return nil
		}
	}
	return fmt.Errorf("vulkan: %s=1 but layer %s is not installed", ValidationEnv, name)
}
