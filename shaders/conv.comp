// Direct fp32 convolution for Conv, FusedConv and ConvTranspose, over one to three
// spatial axes (fewer axes are the trailing ones of three, the leading
// ones of size 1), with groups, strides, dilations, padding, an optional
// bias, an optional residual Sum (FusedConv's input 3, of the output's
// shape, added before the activation) and an activation applied in the
// store.
//
// It is an implicit GEMM per group: the mg output channels of a group are
// the rows, the positions of every image (batch times output size) the
// columns, and the cg input channels times the kernel taps the depth. A
// workgroup covers a tile of rows by columns: invocation lid computes MB
// channels from row (lid / pw) * MB and 4 columns pw apart from column
// lid % pw, so neighbouring invocations read neighbouring input elements
// and the same weights, with no shared memory (slow on CPU
// implementations such as lavapipe). The bounds of each tap are checked
// once per tap and reused over the group's input channels. On GPUs,
// convgemm.comp takes Conv, FusedConv and ConvTranspose instead, but for
// groups of fewer than 16 output channels, and dwconv.comp depthwise ones:
// this is the schedule of CPU implementations and of narrow groups.
//
// ConvTranspose (TRANSPOSED set, W [C, mg, k...]) gathers instead: one
// invocation computes one output element, summing over the taps whose
// input position (o + pad - k * dil) / st is whole and inside the input,
// which it walks directly (firstTap, tapStep of taps.glsl) rather than
// testing every tap.
// There the push constants' idim is the input's sizes and odim the
// output's, as for the direct convolution.
//
// Compiled with HALF_WEIGHTS defined (conv_f16w.spv), w is read as
// float16_t through 16-bit storage (half the memory and bandwidth of
// constant weights); the products still accumulate in fp32.
//
// The specialization constant OP holds MB (1, 4 or 8) in bits 8-11 and
// TRANSPOSED in bit 12; the activation is the push constants' (bits 8-15
// of flags, see epilogue.glsl), so that one pipeline serves them all.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

layout(local_size_x = 256) in;

layout(constant_id = 0) const int OP = 0;

const int MB = (OP >> 8) & 15;
const bool TRANSPOSED = (OP & 4096) != 0;

#include "act.glsl"
#include "taps.glsl"

layout(std430, set = 0, binding = 0) readonly buffer X { DATA x[]; };
layout(std430, set = 0, binding = 1) readonly buffer W { WEIGHT w[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias { DATA bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Y { DATA y[]; };
layout(std430, set = 0, binding = 4) readonly buffer Sum { DATA sum[]; };

layout(push_constant) uniform Params {
    // m and c are the output and input channels, mg and cg their number
    // per group, groups the group count.
    uint m;
    uint c;
    uint mg;
    uint cg;
    uint groups;
    // s is the output size of one image, cols the positions of all
    // images, pw the columns of a tile divided by 4.
    uint s;
    uint cols;
    uint pw;
    uint idim[3];
    uint odim[3];
    uint k[3];
    uint st[3];
    uint dil[3];
    int pad[3];
    // flags: bit 0, bias is bound; bit 1, sum is bound; bits 8-15, the
    // activation (act.glsl's codes).
    uint flags;
    // alpha and beta are the activation's parameters: Clip's bounds,
    // LeakyRelu's slope in alpha.
    float alpha;
    float beta;
} p;

#include "epilogue.glsl"

void transposed() {
    uint ks = p.k[0] * p.k[1] * p.k[2];
    uint isz = p.idim[0] * p.idim[1] * p.idim[2];
    ivec3 dims = ivec3(p.idim[0], p.idim[1], p.idim[2]);
    ivec3 st = ivec3(p.st[0], p.st[1], p.st[2]);
    ivec3 dil = ivec3(p.dil[0], p.dil[1], p.dil[2]);
    ivec3 kn = ivec3(p.k[0], p.k[1], p.k[2]);
    ivec3 step = ivec3(tapStep(dil.x, st.x), tapStep(dil.y, st.y), tapStep(dil.z, st.z));
    uint total = p.cols * p.m;
    uint stride = gl_NumWorkGroups.x * 256u;
    for (uint e = gl_GlobalInvocationID.x; e < total; e += stride) {
        uint img = e / (p.m * p.s);
        uint mi = (e / p.s) % p.m;
        uint s = e % p.s;
        uint g = mi / p.mg;
        uvec3 o = uvec3(s / (p.odim[1] * p.odim[2]), (s / p.odim[2]) % p.odim[1], s % p.odim[2]);
        ivec3 base = ivec3(o) + ivec3(p.pad[0], p.pad[1], p.pad[2]);
        uint xb = (img * p.c + g * p.cg) * isz;
        uint wb = (g * p.cg * p.mg + mi % p.mg) * ks;
        float acc = (p.flags & 1u) != 0u ? float(bias[mi]) : 0.0;
        int fz = firstTap(base.x, kn.x, dil.x, st.x, step.x);
        int fy = firstTap(base.y, kn.y, dil.y, st.y, step.y);
        int fx = firstTap(base.z, kn.z, dil.z, st.z, step.z);
        for (int kz = fz; kz < kn.x; kz += step.x) {
            int tz = base.x - kz * dil.x;
            if (tz < 0) {
                break;
            }
            if (tz / st.x >= dims.x) {
                continue;
            }
            for (int ky = fy; ky < kn.y; ky += step.y) {
                int ty = base.y - ky * dil.y;
                if (ty < 0) {
                    break;
                }
                if (ty / st.y >= dims.y) {
                    continue;
                }
                for (int kx = fx; kx < kn.z; kx += step.z) {
                    int tx = base.z - kx * dil.z;
                    if (tx < 0) {
                        break;
                    }
                    if (tx / st.z >= dims.z) {
                        continue;
                    }
                    uint xo = xb + uint(((tz / st.x) * dims.y + ty / st.y) * dims.z + tx / st.z);
                    uint wo = wb + uint((kz * kn.y + ky) * kn.z + kx);
                    for (uint ch = 0u; ch < p.cg; ch++) {
                        acc += float(x[xo + ch * isz]) * float(w[wo + ch * p.mg * ks]);
                    }
                }
            }
        }
        y[e] = DATA(act(activation(), acc, p.alpha, p.beta));
    }
}

void direct() {
    uint lid = gl_LocalInvocationID.x;
    uint rows = (256u / p.pw) * uint(MB);
    uint width = 4u * p.pw;
    uint tm = (p.mg + rows - 1u) / rows;
    uint tn = (p.cols + width - 1u) / width;
    uint total = p.groups * tm * tn;
    uint ks = p.k[0] * p.k[1] * p.k[2];
    uint isz = p.idim[0] * p.idim[1] * p.idim[2];
    for (uint t = gl_WorkGroupID.x; t < total; t += gl_NumWorkGroups.x) {
        uint g = t / (tm * tn);
        uint r = t % (tm * tn);
        uint m0 = (r / tn) * rows + (lid / p.pw) * uint(MB);
        uint q0 = (r % tn) * width + lid % p.pw;
        if (m0 >= p.mg || q0 >= p.cols) {
            continue;
        }
        // Per column: the image's input base, the window's first input
        // coordinate along each axis, and the output index.
        uint xb[4];
        ivec3 i0[4];
        uint yi[4];
        for (uint j = 0u; j < 4u; j++) {
            uint q = min(q0 + j * p.pw, p.cols - 1u);
            uint img = q / p.s;
            uint s = q % p.s;
            uvec3 o = uvec3(s / (p.odim[1] * p.odim[2]), (s / p.odim[2]) % p.odim[1], s % p.odim[2]);
            i0[j] = ivec3(o * uvec3(p.st[0], p.st[1], p.st[2])) - ivec3(p.pad[0], p.pad[1], p.pad[2]);
            xb[j] = (img * p.c + g * p.cg) * isz;
            yi[j] = (img * p.m + g * p.mg) * p.s + s;
        }
        uint wb[MB];
        vec4 acc[MB];
        for (int i = 0; i < MB; i++) {
            wb[i] = (g * p.mg + min(m0 + uint(i), p.mg - 1u)) * p.cg * ks;
            acc[i] = vec4(0.0);
        }
        uint tap = 0u;
        for (uint kz = 0u; kz < p.k[0]; kz++) {
            for (uint ky = 0u; ky < p.k[1]; ky++) {
                for (uint kx = 0u; kx < p.k[2]; kx++, tap++) {
                    ivec3 d = ivec3(uvec3(kz, ky, kx) * uvec3(p.dil[0], p.dil[1], p.dil[2]));
                    ivec3 dims = ivec3(p.idim[0], p.idim[1], p.idim[2]);
                    bvec4 ok;
                    uvec4 off;
                    for (uint j = 0u; j < 4u; j++) {
                        ivec3 at = i0[j] + d;
                        ok[j] = all(greaterThanEqual(at, ivec3(0))) && all(lessThan(at, dims));
                        off[j] = ok[j] ? xb[j] + uint((at.x * dims.y + at.y) * dims.z + at.z) : 0u;
                    }
                    for (uint ch = 0u; ch < p.cg; ch++) {
                        uvec4 e = off + ch * isz;
                        vec4 xv = vec4(ok.x ? float(x[e.x]) : 0.0, ok.y ? float(x[e.y]) : 0.0, ok.z ? float(x[e.z]) : 0.0, ok.w ? float(x[e.w]) : 0.0);
                        uint wo = ch * ks + tap;
                        for (int i = 0; i < MB; i++) {
                            acc[i] += float(w[wb[i] + wo]) * xv;
                        }
                    }
                }
            }
        }
        for (int i = 0; i < MB && m0 + uint(i) < p.mg; i++) {
            for (uint j = 0u; j < 4u && q0 + j * p.pw < p.cols; j++) {
                epilogue(yi[j] + (m0 + uint(i)) * p.s, g * p.mg + m0 + uint(i), acc[i][j]);
            }
        }
    }
}

void main() {
    if (TRANSPOSED) {
        transposed();
    } else {
        direct();
    }
}
