//go:build !windows && !darwin

package vk

// LoaderName is the shared library opened for Vulkan: the runtime loader,
// not the -dev symlink.
const LoaderName = "libvulkan.so.1"
