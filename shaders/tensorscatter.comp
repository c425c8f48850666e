// TensorScatter on 32-bit elements (float16 with HALF), one invocation per
// output element: the
// cache [prefix, len, inner] (the prefixes of one batch entry being
// consecutive, perBatch of them) takes update [prefix, seq, inner] at
// positions w, w+1, ... of its batch entry's write index w (0 when the
// indices, int64, are not bound), modulo len in circular mode. A write
// index the CPU reports as an error (negative, or w + seq > len in linear
// mode) makes its batch entry's output NaN rather than a plausible cache.
// Elements move as they are, bits unchanged.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

#ifdef HALF
#define ELEM DATA
#define NAN_ELEM DATA(uintBitsToFloat(0x7fc00000u))
#else
#define ELEM uint
#define NAN_ELEM 0x7fc00000u
#endif

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer Past { ELEM past[]; };
layout(std430, set = 0, binding = 1) readonly buffer U { ELEM upd[]; };
layout(std430, set = 0, binding = 2) readonly buffer W { int widx[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Y { ELEM y[]; };

layout(push_constant) uniform Params {
    uint n;
    uint len;
    uint seq;
    uint inner;
    uint perBatch;
    // flags: bit 0, circular; bit 1, write indices bound.
    uint flags;
} p;

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint e = gl_GlobalInvocationID.x; e < p.n; e += stride) {
        uint in_ = e % p.inner;
        uint at = (e / p.inner) % p.len;
        uint pre = e / (p.inner * p.len);
        int w = (p.flags & 2u) != 0u ? widx[2u * (pre / p.perBatch)] : 0;
        bool circular = (p.flags & 1u) != 0u;
        if (w < 0 || !circular && w + int(p.seq) > int(p.len)) {
            y[e] = NAN_ELEM;
            continue;
        }
        // In circular mode, at - w modulo len, on unsigned operands: GLSL
        // leaves % of a negative operand undefined (NVIDIA's differs from
        // lavapipe's).
        int rel = circular ? int((at + p.len - uint(w) % p.len) % p.len) : int(at) - w;
        if (rel >= 0 && rel < int(p.seq)) {
            y[e] = upd[(pre * p.seq + uint(rel)) * p.inner + in_];
        } else {
            y[e] = past[e];
        }
    }
}
