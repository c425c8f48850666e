package loader

import (
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// maxUnknownReports bounds how many places unknownFields reports.
const maxUnknownReports = 6

// unknownFields walks the message tree under m and returns, for each message
// holding fields that onnx.proto does not define, its path from the root
// (named path) and the unknown field numbers, up to maxUnknownReports.
func unknownFields(m protoreflect.Message, path string, out []string) []string {
	if len(out) >= maxUnknownReports {
		return out
	}
	if u := m.GetUnknown(); len(u) > 0 {
		out = append(out, path+" (field "+fieldNumbers(u)+")")
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Message() == nil || fd.IsMap() {
			return true
		}
		name := path + "." + string(fd.Name())
		if fd.IsList() {
			l := v.List()
			for i := 0; i < l.Len() && len(out) < maxUnknownReports; i++ {
				out = unknownFields(l.Get(i).Message(), name+"["+strconv.Itoa(i)+"]", out)
			}
		} else {
			out = unknownFields(v.Message(), name, out)
		}
		return len(out) < maxUnknownReports
	})
	return out
}

// fieldNumbers lists the distinct field numbers found in raw unknown-field
// bytes, e.g. "42, 43".
func fieldNumbers(b []byte) string {
	var nums []int
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			break
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			break
		}
		if !slices.Contains(nums, int(num)) {
			nums = append(nums, int(num))
		}
		b = b[n+m:]
	}
	parts := make([]string, len(nums))
	for i, v := range nums {
		parts[i] = strconv.Itoa(v)
	}
	if len(parts) == 0 {
		return "unreadable"
	}
	return strings.Join(parts, ", ")
}
