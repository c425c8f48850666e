// MaxPool (OP 0) and AveragePool (OP 1) on fp32 over one to three spatial
// axes (fewer axes are the trailing ones of three, the leading ones of
// size 1), with strides, dilations and padding; GlobalMaxPool is MaxPool
// with the whole plane as its window. One invocation computes one output
// element, visiting the window's taps inside the input in row-major order
// as the CPU kernels do.
//
// MaxPool skips NaNs the CPU kernels' way: a tap replaces the best value
// when it is larger or the best value is NaN. A window with no tap inside
// the input gives the lowest float32. AveragePool divides by the number of
// taps inside the input, or with count_include_pad by those inside the
// padded input; a window with none gives 0.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

layout(local_size_x = 256) in;

layout(constant_id = 0) const int OP = 0;

const int MAX = 0;
const int AVERAGE = 1;

layout(std430, set = 0, binding = 0) readonly buffer X { DATA x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { DATA y[]; };

layout(push_constant) uniform Params {
    // n is the number of output elements: planes times odim's product.
    uint n;
    uint idim[3];
    uint odim[3];
    uint k[3];
    uint st[3];
    uint dil[3];
    int pad[3];
    int padEnd[3];
    // flags: bit 0, count_include_pad.
    uint flags;
} p;

void main() {
    uint osz = p.odim[0] * p.odim[1] * p.odim[2];
    uint isz = p.idim[0] * p.idim[1] * p.idim[2];
    ivec3 dims = ivec3(p.idim[0], p.idim[1], p.idim[2]);
    ivec3 dil = ivec3(p.dil[0], p.dil[1], p.dil[2]);
    ivec3 k = ivec3(p.k[0], p.k[1], p.k[2]);
    uint stride = gl_NumWorkGroups.x * 256u;
    for (uint e = gl_GlobalInvocationID.x; e < p.n; e += stride) {
        uint plane = e / osz;
        uint s = e % osz;
        uvec3 o = uvec3(s / (p.odim[1] * p.odim[2]), (s / p.odim[2]) % p.odim[1], s % p.odim[2]);
        ivec3 start = ivec3(o * uvec3(p.st[0], p.st[1], p.st[2])) - ivec3(p.pad[0], p.pad[1], p.pad[2]);
        uint base = plane * isz;
        float best = -3.402823466e+38;
        bool found = false;
        float sum = 0.0;
        uint count = 0u;
        for (int kz = 0; kz < k.x; kz++) {
            int iz = start.x + kz * dil.x;
            if (iz < 0 || iz >= dims.x) {
                continue;
            }
            for (int ky = 0; ky < k.y; ky++) {
                int iy = start.y + ky * dil.y;
                if (iy < 0 || iy >= dims.y) {
                    continue;
                }
                for (int kx = 0; kx < k.z; kx++) {
                    int ix = start.z + kx * dil.z;
                    if (ix < 0 || ix >= dims.z) {
                        continue;
                    }
                    float v = float(x[base + uint((iz * dims.y + iy) * dims.z + ix)]);
                    if (OP == MAX) {
                        if (!found || v > best || isnan(best)) {
                            best = v;
                        }
                        found = true;
                    } else {
                        sum += v;
                        count++;
                    }
                }
            }
        }
        if (OP == MAX) {
            y[e] = DATA(best);
            continue;
        }
        if ((p.flags & 1u) != 0u) {
            // The taps inside the padded input, axis by axis.
            ivec3 last = (dims + ivec3(p.padEnd[0], p.padEnd[1], p.padEnd[2]) - 1 - start) / dil + 1;
            ivec3 inside = clamp(last, ivec3(0), k);
            count = uint(inside.x * inside.y * inside.z);
        }
        y[e] = DATA(count > 0u ? sum / float(count) : 0.0);
    }
}
