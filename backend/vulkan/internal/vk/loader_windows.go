package vk

import "syscall"

// LoaderName is the shared library opened for Vulkan: the loader that
// GPU drivers install.
const LoaderName = "vulkan-1.dll"

// openLoader opens the Vulkan loader library.
func openLoader() (uintptr, error) {
	h, err := syscall.LoadLibrary(LoaderName)
	return uintptr(h), err
}

// loaderSymbol returns the address of the loader's function name.
func loaderSymbol(lib uintptr, name string) (uintptr, error) {
	return syscall.GetProcAddress(syscall.Handle(lib), name)
}
