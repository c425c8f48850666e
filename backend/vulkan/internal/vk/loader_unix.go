//go:build !windows

package vk

import "github.com/ebitengine/purego"

// openLoader opens the Vulkan loader library.
func openLoader() (uintptr, error) {
	return purego.Dlopen(LoaderName, purego.RTLD_NOW|purego.RTLD_LOCAL)
}

// loaderSymbol returns the address of the loader's function name.
func loaderSymbol(lib uintptr, name string) (uintptr, error) {
	return purego.Dlsym(lib, name)
}
