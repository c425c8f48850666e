package vulkan

import (
	"fmt"
	"slices"

	"github.com/onnxvk/onnxvk/backend/vulkan/internal/vk"
	"github.com/onnxvk/onnxvk/graph"
)

// weightBlockBytes is the size up to which weights share one device
// allocation; a larger weight gets a block of its own.
const weightBlockBytes = 256 << 20

// weightRef is where a resident weight lives: a range of a weight block.
type weightRef struct {
	block     *buffer
	off, size uint64
}

// weightKey names a weight to make resident: constant t as stored, or,
// with half set, as fp16 (see WithFP16).
type weightKey struct {
	t    *graph.Tensor
	half bool
}

// bytes returns the weight's bytes as the device holds them.
func (k weightKey) bytes() []byte {
	if k.half {
		return halfBytes(graph.View[float32](k.t))
	}
	return k.t.Data
}

// size is the length of bytes().
func (k weightKey) size() uint64 {
	if k.half {
		return uint64(len(k.t.Data) / 2)
	}
	return uint64(len(k.t.Data))
}

// table returns the map that holds the weights of k's kind.
func (d *Device) table(k weightKey) map[*graph.Tensor]weightRef {
	if k.half {
		return d.half.weights
	}
	return d.weights
}

// resident returns where the weight k lives; makeResident must have
// uploaded it. d.mu must be held.
func (d *Device) resident(k weightKey) weightRef { return d.table(k)[k.t] }

// makeResident uploads every weight of keys that the device does not hold
// yet, in bulk: the weights share device-local blocks of up to
// weightBlockBytes (one allocation and one buffer each, carved at the
// storage-buffer offset alignment), and each block is filled through its
// mapping on unified memory, else through one staging buffer and one
// submission. The weights of keys whose tensor is in mapped (the values a
// program computed from its sizes, uploaded anew for each binding) go to
// host-visible blocks instead, filled through their mapping on any device:
// they cost no submission. d.mu must be held.
func (d *Device) makeResident(keys []weightKey, mapped map[*graph.Tensor]bool) error {
	align := d.bindAlign()
	for _, host := range []bool{false, true} {
		var (
			todo []weightKey
			offs []uint64
			end  uint64
		)
		flush := func() error {
			if len(todo) == 0 {
				return nil
			}
			err := d.uploadBlock(todo, offs, end, host)
			todo, offs, end = todo[:0], offs[:0], 0
			return err
		}
		queued := map[weightKey]bool{}
		for _, k := range keys {
			if _, ok := d.table(k)[k.t]; ok || queued[k] || mapped[k.t] != host {
				continue
			}
			queued[k] = true
			off := (end + align - 1) / align * align
			if len(todo) > 0 && off+k.size() > weightBlockBytes {
				if err := flush(); err != nil {
					return err
				}
				off = 0
			}
			todo, offs, end = append(todo, k), append(offs, off), off+k.size()
		}
		if err := flush(); err != nil {
			return err
		}
	}
	return nil
}

// uploadBlock allocates one block of size bytes, device-local or, with
// host set, host-visible, and fills it with keys[i] at offs[i].
func (d *Device) uploadBlock(keys []weightKey, offs []uint64, size uint64, host bool) error {
	b, err := d.newBuffer(size, host)
	if err != nil {
		return fmt.Errorf("allocating %d bytes for %d weights: %w", size, len(keys), err)
	}
	dst := b.mapped
	var staging *buffer
	if dst == nil {
		if staging, err = d.newBuffer(size, true); err != nil {
			b.free(d.dev)
			return fmt.Errorf("allocating a %d-byte staging buffer for %d weights: %w", size, len(keys), err)
		}
		defer staging.free(d.dev)
		dst = staging.mapped
	}
	var moved int64
	// Weights mapped from a file truncated since Load fault when read.
	err = graph.CatchFaults(func() error {
		for i, k := range keys {
			moved += int64(copy(dst[offs[i]:], k.bytes()))
		}
		return nil
	})
	if err != nil {
		b.free(d.dev)
		return err
	}
	d.counters.hostDeviceBytes.Add(moved)
	if staging != nil {
		if err := d.copyOnce(staging, b, size); err != nil {
			b.free(d.dev)
			return err
		}
	}
	d.blocks = append(d.blocks, b)
	d.inBlock[b] = len(keys)
	for i, k := range keys {
		d.table(k)[k.t] = weightRef{block: b, off: offs[i], size: k.size()}
	}
	return nil
}

// uniqueKeys returns keys without repeats, in their first order.
func uniqueKeys(keys []weightKey) []weightKey {
	seen := make(map[weightKey]bool, len(keys))
	return slices.DeleteFunc(keys, func(k weightKey) bool {
		dup := seen[k]
		seen[k] = true
		return dup
	})
}

// holdWeights counts one more user, a program, of each of keys that is
// resident, and returns those: what the program gives back with
// releaseWeights. keys must not repeat. d.mu must be held.
func (d *Device) holdWeights(keys []weightKey) []weightKey {
	var held []weightKey
	for _, k := range keys {
		if _, ok := d.table(k)[k.t]; ok {
			d.users[k]++
			held = append(held, k)
		}
	}
	return held
}

// releaseWeights counts one user fewer of each of keys (see holdWeights)
// and frees what no program uses any more: a weight leaves its table,
// and a block is freed once it holds no weight (until then, the memory of
// the weights that left it stays allocated). Weights made resident by a
// compile that failed before holding them have no user and are freed
// too. d.mu must be held, and no Run may use a freed weight.
func (d *Device) releaseWeights(keys []weightKey) {
	for _, k := range keys {
		d.users[k]--
	}
	for _, half := range []bool{false, true} {
		table := d.table(weightKey{half: half})
		for t, ref := range table {
			k := weightKey{t: t, half: half}
			if d.users[k] > 0 {
				continue
			}
			delete(d.users, k)
			delete(table, t)
			d.inBlock[ref.block]--
		}
	}
	d.blocks = slices.DeleteFunc(d.blocks, func(b *buffer) bool {
		if d.inBlock[b] > 0 {
			return false
		}
		delete(d.inBlock, b)
		b.free(d.dev)
		return true
	})
}

// copyOnce copies the first size bytes of src into dst with one
// submission and waits for it, ordered after every earlier write to either
// and before later reads by shaders and the host.
func (d *Device) copyOnce(src, dst *buffer, size uint64) error {
	c, err := d.newCommands()
	if err != nil {
		return err
	}
	defer c.destroy(d.dev)
	bi := &vk.CommandBufferBeginInfo{SType: vk.StructureTypeCommandBufferBeginInfo, Flags: vk.CommandBufferUsageOneTimeSubmitBit}
	if err := vk.BeginCommandBuffer(c.cmd, bi); err != nil {
		return fmt.Errorf("vulkan: vkBeginCommandBuffer: %w", err)
	}
	vk.CmdPipelineBarrier(c.cmd, vk.PipelineStageComputeShaderBit|vk.PipelineStageTransferBit|vk.PipelineStageHostBit, vk.PipelineStageTransferBit,
		&vk.MemoryBarrier{SType: vk.StructureTypeMemoryBarrier, SrcAccessMask: vk.AccessShaderWriteBit | vk.AccessTransferWriteBit | vk.AccessHostWriteBit,
			DstAccessMask: vk.AccessTransferReadBit | vk.AccessTransferWriteBit})
	vk.CmdCopyBuffer(c.cmd, src.buf, dst.buf, &vk.BufferCopy{Size: size})
	vk.CmdPipelineBarrier(c.cmd, vk.PipelineStageTransferBit, vk.PipelineStageComputeShaderBit|vk.PipelineStageHostBit,
		&vk.MemoryBarrier{SType: vk.StructureTypeMemoryBarrier, SrcAccessMask: vk.AccessTransferWriteBit, DstAccessMask: vk.AccessShaderReadBit | vk.AccessHostReadBit})
	if err := vk.EndCommandBuffer(c.cmd); err != nil {
		return fmt.Errorf("vulkan: vkEndCommandBuffer: %w", err)
	}
	return d.submit(c)
}

// bindAlign is the alignment of every offset the device binds: the
// storage-buffer offset alignment, at least 256 bytes.
func (d *Device) bindAlign() uint64 {
	return max(d.info.limits.MinStorageBufferOffsetAlignment, 256)
}
