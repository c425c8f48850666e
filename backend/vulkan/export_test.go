package vulkan

import "testing"

// ForceMatMulSchedule makes the Devices opened until t ends use the named
// schedule of matmul.comp: "blocked", "tiled" or "gemv".
func ForceMatMulSchedule(t testing.TB, name string) {
	for _, s := range schedules {
		if s.name == name {
			old := forcedSchedule
			t.Cleanup(func() { forcedSchedule = old })
			forcedSchedule = s.s
			return
		}
	}
	t.Fatalf("no matmul schedule %q", name)
}

// MatMulSchedules names the schedules of matmul.comp.
func MatMulSchedules() []string {
	var names []string
	for _, s := range schedules {
		names = append(names, s.name)
	}
	return names
}

// ForceGEMVColumns makes the gemv schedule cover cols columns per
// workgroup (a power of two up to 256) until t ends.
func ForceGEMVColumns(t testing.TB, cols int64) {
	old := forcedColumns
	t.Cleanup(func() { forcedColumns = old })
	forcedColumns = cols
}
