// Depthwise fp32 convolution for Conv and FusedConv of one input channel
// per group (group = input channels, mg = output channels per group, the
// channel multiplier) over one or two spatial axes (one is the trailing
// axis of two, the leading of size 1; the push constants' window is
// conv.comp's, whose first slot is unused here), with strides,
// dilations, padding, an optional bias, an optional residual Sum
// (FusedConv's input 3, added before the activation) and an activation
// applied in the store (epilogue.glsl, as conv.comp).
//
// A workgroup takes one output channel of one image and a tile of th
// output rows by tw columns (tiles along y, tx along x): it stages the
// channel's kernel taps and the input patch the tile reads, padding
// read as 0, in shared memory once, then invocation lid computes the
// tile's OUTS outputs lid, lid + 256, ... (th·tw ≤ 256·OUTS; past the
// tile it computes the last output again and stores nothing) from shared
// memory, the taps' loop outermost. backend/vulkan sizes the tile so that the taps and
// the patch fit SHARED floats, and takes conv.comp where they do not.
//
// Compiled with HALF_WEIGHTS defined (dwconv_f16w.spv), w is read as
// float16_t; with HALF (dwconv_f16.spv) every tensor is float16. Shared
// memory and the sums stay fp32.
//
// The specialization constant OP holds OUTS (1 to 4) in bits 8-10; the
// activation is the push constants' (bits 8-15 of flags, see
// epilogue.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

layout(local_size_x = 256) in;

layout(constant_id = 0) const int OP = 0;

const uint OUTS = uint((OP >> 8) & 7);

#include "act.glsl"

// SHARED is the floats of the shared array (16 KiB, every Vulkan device's
// least maxComputeSharedMemorySize).
const uint SHARED = 4096u;

layout(std430, set = 0, binding = 0) readonly buffer X { DATA x[]; };
layout(std430, set = 0, binding = 1) readonly buffer W { WEIGHT w[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias { DATA bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Y { DATA y[]; };
layout(std430, set = 0, binding = 4) readonly buffer Sum { DATA sum[]; };

layout(push_constant) uniform Params {
    // m is the output channels, mg their number per input channel,
    // images the batch.
    uint m;
    uint mg;
    uint images;
    // A tile is th rows by tw columns of the output; ty and tx are the
    // tiles along each axis.
    uint th;
    uint tw;
    uint ty;
    uint tx;
    uint idim[3];
    uint odim[3];
    uint k[3];
    uint st[3];
    uint dil[3];
    int pad[3];
    // flags: bit 0, bias is bound; bit 1, sum is bound; bits 8-15, the
    // activation (act.glsl's codes).
    uint flags;
    // alpha and beta are the activation's parameters.
    float alpha;
    float beta;
} p;

// tile holds the taps of the tile's channel, then the input patch, row
// by row.
shared float tile[SHARED];

#include "epilogue.glsl"

void main() {
    uint lid = gl_LocalInvocationID.x;
    uint taps = p.k[1] * p.k[2];
    uint ph = (p.th - 1u) * p.st[1] + (p.k[1] - 1u) * p.dil[1] + 1u;
    uint pw = (p.tw - 1u) * p.st[2] + (p.k[2] - 1u) * p.dil[2] + 1u;
    int ih = int(p.idim[1]);
    int iw = int(p.idim[2]);
    uint osz = p.odim[1] * p.odim[2];
    uint n = p.th * p.tw;
    uint tiles = p.ty * p.tx;
    uint total = p.images * p.m * tiles;
    for (uint t = gl_WorkGroupID.x; t < total; t += gl_NumWorkGroups.x) {
        // plane is the output channel's index over images and channels.
        uint plane = t / tiles;
        uint mi = plane % p.m;
        uint oy0 = (t % tiles) / p.tx * p.th;
        uint ox0 = (t % tiles) % p.tx * p.tw;
        int iy0 = int(oy0 * p.st[1]) - p.pad[1];
        int ix0 = int(ox0 * p.st[2]) - p.pad[2];
        uint xb = ((plane / p.m) * (p.m / p.mg) + mi / p.mg) * uint(ih * iw);
        // The previous tile's reads are done.
        barrier();
        for (uint i = lid; i < taps; i += 256u) {
            tile[i] = float(w[mi * taps + i]);
        }
        for (uint i = lid; i < ph * pw; i += 256u) {
            int iy = iy0 + int(i / pw);
            int ix = ix0 + int(i % pw);
            bool inside = iy >= 0 && iy < ih && ix >= 0 && ix < iw;
            tile[taps + i] = inside ? float(x[xb + uint(iy * iw + ix)]) : 0.0;
        }
        barrier();
        uint at[OUTS];
        float acc[OUTS];
        for (uint j = 0u; j < OUTS; j++) {
            uint e = min(lid + j * 256u, n - 1u);
            at[j] = taps + (e / p.tw) * p.st[1] * pw + (e % p.tw) * p.st[2];
            acc[j] = 0.0;
        }
        for (uint ky = 0u; ky < p.k[1]; ky++) {
            for (uint kx = 0u; kx < p.k[2]; kx++) {
                float wv = tile[ky * p.k[2] + kx];
                uint off = ky * p.dil[1] * pw + kx * p.dil[2];
                for (uint j = 0u; j < OUTS; j++) {
                    acc[j] += wv * tile[at[j] + off];
                }
            }
        }
        for (uint j = 0u; j < OUTS; j++) {
            uint e = lid + j * 256u;
            uint oy = oy0 + e / p.tw;
            uint ox = ox0 + e % p.tw;
            if (e < n && oy < p.odim[1] && ox < p.odim[2]) {
                epilogue(plane * osz + oy * p.odim[2] + ox, mi, acc[j]);
            }
        }
    }
}
