// Attention on fp32 (ONNX opsets 23 and 24; hostfallback/attention.go
// states the semantics). OP 0: one workgroup per query row (b, h, i), with
// its scores over the past and new keys in scratch row (b·hq + h)·sq + i of
// total floats: scale·q·k, softcap, the bias of the mask, is_causal and
// nonpad_kv_seqlen, a softmax whose fully masked rows are zeros, then
// y = p·v. Query head h reads key/value head h / (hq / hkv); Q, K, V and Y
// are [batch, heads, seq, size] or, 3-D, [batch, seq, heads·size]; the
// past caches are [batch, hkv, past, size]. OP 1: one invocation per
// element of a present cache [batch, hkv, past + skv, size]: the past, then
// K (or V). Compiled with HALF, the tensors and a float mask are float16,
// the arithmetic fp32. With flag bit 6 the softmax's input and output are
// rounded to float16 (softmax_precision float16, the default for float16
// inputs), to nearest even as the CPU rounds them (roundHalf).
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

layout(constant_id = 0) const int OP = 0;

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer Q { DATA q[]; };
layout(std430, set = 0, binding = 1) readonly buffer K { DATA k[]; };
layout(std430, set = 0, binding = 2) readonly buffer V { DATA v[]; };
// The mask: float (float16 with HALF), or bools read as bytes;
// nonpad_kv_seqlen: int64.
layout(std430, set = 0, binding = 3) readonly buffer M { uint mask[]; };
layout(std430, set = 0, binding = 4) readonly buffer PK { DATA pastK[]; };
layout(std430, set = 0, binding = 5) readonly buffer PV { DATA pastV[]; };
layout(std430, set = 0, binding = 6) readonly buffer NP { int nonpad[]; };
layout(std430, set = 0, binding = 7) writeonly buffer Y { DATA y[]; };
layout(std430, set = 0, binding = 8) writeonly buffer QK { DATA qk[]; };
layout(std430, set = 0, binding = 9) buffer Scores { float scores[]; };

layout(push_constant) uniform Params {
    uint batch;
    uint hq;
    uint hkv;
    uint sq;
    uint skv;
    uint past;
    uint dim;
    uint vdim;
    float scale;
    float softcap;
    // flags: bit 0, 3-D; bit 1, float mask; bit 2, bool mask; bit 3,
    // is_causal; bit 4, nonpad_kv_seqlen bound; bit 5, qk bound; bit 6,
    // softmax in float16; bits 8 and up, qk_matmul_output_mode.
    uint flags;
    // The mask's element strides along batch, heads and queries (0 where
    // broadcast) and its keys (later keys are masked).
    uint mb;
    uint mh;
    uint mi;
    uint keys;
} p;

shared float part[256];

// roundHalf rounds x to the nearest float16 value, ties to even, as an fp32
// value: exactly, whatever rounding the device's own conversions use
// (scalings by powers of 2 are exact, roundEven rounds to nearest even);
// beyond float16's range it gives an infinity, NaN stays NaN.
float roundHalf(float x) {
    if (isnan(x) || isinf(x)) {
        return x;
    }
    int ex = int((floatBitsToUint(x) >> 23) & 0xffu) - 127;
    // The float16 quantum at x: 2^-24 among the subnormals.
    int q = max(ex, -14) - 10;
    float r = ldexp(roundEven(ldexp(x, -q)), q);
    return abs(r) > 65504.0 ? uintBitsToFloat(floatBitsToUint(x) & 0x80000000u | 0x7f800000u) : r;
}

// reduce returns the sum (or, with takeMax, the maximum) of every
// invocation's x to all of them.
float reduce(float x, bool takeMax) {
    uint lid = gl_LocalInvocationID.x;
    part[lid] = x;
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1u) {
        if (lid < s) {
            part[lid] = takeMax ? max(part[lid], part[lid + s]) : part[lid] + part[lid + s];
        }
        barrier();
    }
    float r = part[0];
    barrier();
    return r;
}

// row returns the element offset of row s of head h of batch entry b, of
// a tensor of heads heads of size elements over len positions.
uint row(uint b, uint h, uint s, uint heads, uint len, uint size) {
    if ((p.flags & 1u) != 0u) {
        return (b * len + s) * heads * size + h * size;
    }
    return ((b * heads + h) * len + s) * size;
}

void present() {
    uint total = p.past + p.skv;
    uint n = p.batch * p.hkv * total * p.dim;
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint e = gl_GlobalInvocationID.x; e < n; e += stride) {
        uint d = e % p.dim, j = (e / p.dim) % total, bh = e / (p.dim * total);
        if (j < p.past) {
            y[e] = pastK[(bh * p.past + j) * p.dim + d];
        } else {
            y[e] = k[row(bh / p.hkv, bh % p.hkv, j - p.past, p.hkv, p.skv, p.dim) + d];
        }
    }
}

void main() {
    if (OP == 1) {
        present();
        return;
    }
    const float NEG_INF = uintBitsToFloat(0xff800000u);
    uint lid = gl_LocalInvocationID.x;
    uint total = p.past + p.skv;
    uint mode = p.flags >> 8;
    bool wantQK = (p.flags & 32u) != 0u;
    bool halfSoftmax = (p.flags & 64u) != 0u;
    for (uint r = gl_WorkGroupID.x; r < p.batch * p.hq * p.sq; r += gl_NumWorkGroups.x) {
        uint i = r % p.sq, h = (r / p.sq) % p.hq, b = r / (p.sq * p.hq);
        uint kh = h / (p.hq / p.hkv);
        uint qoff = row(b, h, i, p.hq, p.sq, p.dim);
        int valid = int(total), offset = int(p.past);
        if ((p.flags & 16u) != 0u) {
            valid = nonpad[2u * b];
            offset = valid - int(p.sq);
        }
        float open = 0.0, top = NEG_INF;
        for (uint j = lid; j < total; j += 256u) {
            float s = 0.0;
            if (j < p.past) {
                uint ko = ((b * p.hkv + kh) * p.past + j) * p.dim;
                for (uint d = 0u; d < p.dim; d++) {
                    s += float(q[qoff + d]) * float(pastK[ko + d]);
                }
            } else {
                uint ko = row(b, kh, j - p.past, p.hkv, p.skv, p.dim);
                for (uint d = 0u; d < p.dim; d++) {
                    s += float(q[qoff + d]) * float(k[ko + d]);
                }
            }
            s *= p.scale;
            if (wantQK && mode == 0u) {
                qk[r * total + j] = DATA(s);
            }
            if (p.softcap > 0.0) {
                s = p.softcap * tanh(s / p.softcap);
            }
            if (wantQK && mode == 1u) {
                qk[r * total + j] = DATA(s);
            }
            float bias = 0.0;
            bool hasMask = (p.flags & 6u) != 0u;
            if (hasMask && j >= p.keys || int(j) >= valid || (p.flags & 8u) != 0u && int(j) > int(i) + offset) {
                bias = NEG_INF;
            } else if (hasMask) {
                uint at = b * p.mb + h * p.mh + i * p.mi + j;
                if ((p.flags & 4u) != 0u) {
                    bias = ((mask[at >> 2] >> (8u * (at & 3u))) & 0xffu) != 0u ? 0.0 : NEG_INF;
                } else {
#ifdef HALF
                    bias = unpackHalf2x16(mask[at >> 1u])[at & 1u];
#else
                    bias = uintBitsToFloat(mask[at]);
#endif
                }
            }
            if (!(isinf(bias) && bias < 0.0)) {
                open += 1.0;
            }
            s += bias;
            if (wantQK && mode == 2u) {
                qk[r * total + j] = DATA(s);
            }
            if (halfSoftmax) {
                s = roundHalf(s);
            }
            scores[r * total + j] = s;
            top = max(top, s);
        }
        bool dead = reduce(open, false) == 0.0;
        top = reduce(top, true);
        float sum = 0.0;
        for (uint j = lid; j < total; j += 256u) {
            float s = scores[r * total + j];
            float e = dead || isinf(s) ? 0.0 : exp(s - top);
            scores[r * total + j] = e;
            sum += e;
        }
        sum = reduce(sum, false);
        float inv = sum > 0.0 ? 1.0 / sum : 0.0;
        for (uint j = lid; j < total; j += 256u) {
            float pr = scores[r * total + j] * inv;
            if (halfSoftmax) {
                pr = roundHalf(pr);
            }
            scores[r * total + j] = pr;
            if (wantQK && mode == 3u) {
                qk[r * total + j] = DATA(pr);
            }
        }
        memoryBarrierBuffer();
        barrier();
        uint yoff = row(b, h, i, p.hq, p.sq, p.vdim);
        for (uint d = lid; d < p.vdim; d += 256u) {
            float acc = 0.0;
            for (uint j = 0u; j < total; j++) {
                float pr = scores[r * total + j];
                if (j < p.past) {
                    acc += pr * float(pastV[((b * p.hkv + kh) * p.past + j) * p.vdim + d]);
                } else {
                    acc += pr * float(v[row(b, kh, j - p.past, p.hkv, p.skv, p.vdim) + d]);
                }
            }
            y[yoff + d] = DATA(acc);
        }
        barrier();
    }
}
