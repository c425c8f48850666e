package onnxvk_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
)

func TestDevices(t *testing.T) {
	devices, reason := onnxvk.Devices()
	require.NotEmpty(t, devices)
	host := devices[len(devices)-1]
	require.Equal(t, "cpu", host.Name)
	require.Equal(t, "host", host.Kind)
	auto, defaults := 0, 0
	for _, d := range devices {
		if d.Auto {
			auto++
		}
		if d.Default {
			defaults++
			require.True(t, strings.HasPrefix(d.Name, "vulkan:"), d.Name)
		}
	}
	require.Equal(t, 1, auto, "exactly one device is auto's")
	require.LessOrEqual(t, defaults, 1)
	require.Equal(t, host.Auto, reason != "", "a reason exactly when auto runs on the CPU: %q", reason)
	require.NotContains(t, reason, "device unavailable")
}

func TestDeviceReason(t *testing.T) {
	sess, err := onnxvk.NewSession(mlpModel(), onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	require.Equal(t, "runs on the CPU: the device option is cpu", sess.DeviceReason())
	require.NoError(t, sess.Close())

	sess, err = onnxvk.NewSession(mlpModel())
	require.NoError(t, err)
	defer sess.Close()
	devices, reason := onnxvk.Devices()
	for _, d := range devices {
		if d.Auto {
			require.Equal(t, d.Name, sess.Device())
		}
	}
	if sess.Device() == "cpu" {
		require.Equal(t, "runs on the CPU: auto takes no GPU: "+reason, sess.DeviceReason())
	} else {
		require.True(t, strings.HasPrefix(sess.DeviceReason(), "runs on "+sess.Device()+" ("), sess.DeviceReason())
	}
}
