package vulkan

// OpenAs opens the Vulkan device name ("vulkan", "vulkan:N", "auto", as
// Open does) as a separate device instance called as: a logical device of
// a multi-device configuration ("d0", "d1", ...). Each call creates its
// own VkDevice, queue, memory and programs, so several logical devices may
// share one physical device and still run their plan segments apart. Plans
// place steps on the instance by the name as. opts are Open's.
func OpenAs(name, as string, opts ...OpenOption) (*Device, error) {
	d, err := Open(name, opts...)
	if err != nil {
		return nil, err
	}
	d.name = as
	return d, nil
}
