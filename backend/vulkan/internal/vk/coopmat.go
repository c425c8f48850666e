package vk

import (
	"structs"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Declarations of VK_KHR_cooperative_matrix (Vulkan headers 1.3.255 and
// later; layout_test.go checks them where the installed header has them).
const (
	StructureTypePhysicalDeviceCooperativeMatrixFeaturesKHR = 1000506000
	StructureTypeCooperativeMatrixPropertiesKHR             = 1000506001
	ComponentTypeFloat16KHR                                 = 0
	ComponentTypeFloat32KHR                                 = 1
	ScopeSubgroupKHR                                        = 3
)

// PhysicalDeviceCooperativeMatrixFeaturesKHR is VkPhysicalDeviceCooperativeMatrixFeaturesKHR.
type PhysicalDeviceCooperativeMatrixFeaturesKHR struct {
	_                                   structs.HostLayout
	SType                               int32
	PNext                               unsafe.Pointer
	CooperativeMatrix                   uint32
	CooperativeMatrixRobustBufferAccess uint32
}

// CooperativeMatrixPropertiesKHR is VkCooperativeMatrixPropertiesKHR (the c
// tags name the fields C spells with a capital first).
type CooperativeMatrixPropertiesKHR struct {
	_                      structs.HostLayout
	SType                  int32
	PNext                  unsafe.Pointer
	MSize                  uint32 `c:"MSize"`
	NSize                  uint32 `c:"NSize"`
	KSize                  uint32 `c:"KSize"`
	AType                  int32  `c:"AType"`
	BType                  int32  `c:"BType"`
	CType                  int32  `c:"CType"`
	ResultType             int32  `c:"ResultType"`
	SaturatingAccumulation uint32
	Scope                  int32
}

// GetPhysicalDeviceCooperativeMatrixPropertiesKHR calls
// vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR through its address f
// (an instance function, see GetInstanceProcAddr).
func GetPhysicalDeviceCooperativeMatrixPropertiesKHR(f, pd uintptr) ([]CooperativeMatrixPropertiesKHR, error) {
	var n uint32
	r, _, _ := purego.SyscallN(f, pd, uintptr(unsafe.Pointer(&n)), 0)
	if err := result(r); err != nil || n == 0 {
		return nil, err
	}
	out := make([]CooperativeMatrixPropertiesKHR, n)
	for i := range out {
		out[i].SType = StructureTypeCooperativeMatrixPropertiesKHR
	}
	r, _, _ = purego.SyscallN(f, pd, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&out[0])))
	return out[:n], result(r)
}
