package vk

// LoaderName is the shared library opened for Vulkan: the Vulkan SDK's
// loader, which finds MoltenVK.
const LoaderName = "libvulkan.1.dylib"
