// Attention on fp32 in one pass over the keys, flash-attention style: ONNX
// Attention (hostfallback/attention.go states the semantics;
// attention.comp is the kernel that also writes qk_matmul_output) and the
// fused domain's ScaledDotProductAttention (graph/ops/fused.go). A workgroup takes a tile of
// tq query rows (1 to 16) of one (batch, head) and lanes = 64 / tq
// invocations per row. It stages the rows of Q in shared memory, then
// walks the past and new keys and values in tiles of tk (staged in
// shared memory, K then V in the same array): each invocation computes the
// scores of its row for keys lane, lane + lanes, ... of the tile (scale,
// softcap, mask, is_causal, nonpad_kv_seqlen: a masked score is -inf), the
// row's running maximum is updated from the tile's scores, the accumulator
// and the running sum rescaled by exp(old max - new max), and the
// invocation adds p·v for its dims lane, lane + lanes, ... Scores and
// probabilities never leave shared memory; each output row is written
// once, divided by the sum (a row whose every score is -inf gives zeros).
// Tiles after the last key any row may see (is_causal, nonpad_kv_seqlen, a
// mask's last key) are skipped. Every row reads the whole tile of scores
// from shared memory for its maximum and sum, so no cross-invocation
// reduction is needed beyond the SUBGROUP variant's dot groups (below).
//
// With flag bit 6 (softmax_precision float16) the softmax's input and
// output are rounded to float16 as attention.comp rounds them; a
// probability needs the row's final sum, so the kernel then takes two
// passes over the keys: the first for the maximum and the sum, the second
// for the rounded probabilities times V.
//
// Split over the keys (flash-decoding, OP bit SPLIT), for a few query rows
// against many keys: the keys are cut into chunks of p.tiles >> 16 key
// tiles, and a workgroup takes one (batch, head, query tile, chunk) item,
// walking only its chunk's keys as above. Instead of the output row it
// writes the row's running maximum, sum and unnormalised accumulator to
// part (binding 8, fp32 even with HALF): part[(row · chunks + chunk) ·
// (vdim + 2)] on, the maximum, then the sum and the vdim accumulators, row
// being (b · hq + h) · sq + i. A chunk past the last key a row may see
// writes a maximum of -inf and zeros. A second dispatch with COMBINE, one
// invocation per output element, merges a row's chunks: each scaled by
// exp(its maximum - the row's maximum), summed, and divided by the summed
// sums (zeros where no chunk saw a key). The float16 softmax's two passes
// need the row's final sum before any probability, so it is never split.
//
// Compiled with SUBGROUP (flashattn_sg.spv, flashattn_f16_sg.spv), the
// GPU configuration of the prefill path: the workgroup is as wide as
// specialization constant 1 says (256 invocations: the backend's
// flashWideWG), so a row has 256 / tq lanes, and the dot product of a
// score is spread over a dot group of 1, 2, 4 or 8 adjacent lanes of a
// subgroup (p.tiles bits 14-15 hold its log2), each summing the dims g,
// g + group, ... of it, their partial sums added by subgroup shuffles;
// a row then scores lanes / group keys at once, which keeps every lane
// busy where a row has more lanes than a tile has keys. Invocations are
// numbered by subgroup (gl_SubgroupID, gl_SubgroupInvocationID) so that
// a dot group never straddles two subgroups. Without SUBGROUP the group is
// one lane and the workgroup 64 invocations.
//
// Compiled with HALF, the tensors and a float mask are float16, the
// arithmetic and shared memory fp32. Q, K, V and Y are read and written
// through strides (an offset and the strides of batch, head and position;
// a head's elements are contiguous, but for K's), so that Attention's 3-D and 4-D
// layouts and ScaledDotProductAttention's permuted and viewed operands
// take no copies; the past caches are [batch, hkv, past, size]. Head
// sizes up to MAXD.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

#ifdef SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
layout(local_size_x = 256, local_size_x_id = 1) in;
#define WG gl_WorkGroupSize.x
#else
#define WG 64
layout(local_size_x = WG) in;
#endif
#define MAXD 128
// Shared floats: the query tile (16 rows of MAXD + 1), the key or value
// tile and the scores of the query tile against the key tile.
#define QFLOATS 2064
#define KVFLOATS 4096
#define SFLOATS 1024

layout(constant_id = 0) const int OP = 0;

const bool SPLIT = (OP & 1) != 0;
const bool COMBINE = (OP & 2) != 0;

layout(std430, set = 0, binding = 0) readonly buffer Q { DATA q[]; };
layout(std430, set = 0, binding = 1) readonly buffer K { DATA k[]; };
layout(std430, set = 0, binding = 2) readonly buffer V { DATA v[]; };
// The mask: float (float16 with HALF), or bools read as bytes.
layout(std430, set = 0, binding = 3) readonly buffer M { uint mask[]; };
layout(std430, set = 0, binding = 4) readonly buffer PK { DATA pastK[]; };
layout(std430, set = 0, binding = 5) readonly buffer PV { DATA pastV[]; };
// nonpad_kv_seqlen: int64.
layout(std430, set = 0, binding = 6) readonly buffer NP { int nonpad[]; };
layout(std430, set = 0, binding = 7) writeonly buffer Y { DATA y[]; };
// The chunks' partial results (SPLIT writes them, COMBINE reads them).
layout(std430, set = 0, binding = 8) buffer P { float part[]; };

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
    // flags: bit 1, float mask; bit 2, bool mask; bit 3,
    // is_causal; bit 4, nonpad_kv_seqlen bound; bit 6, softmax in float16;
    // bit 7, the bool mask hides the keys where it is true (not false).
    uint flags;
    // The mask's element strides along batch, heads and queries (0 where
    // broadcast) and its keys (later keys are masked).
    uint mb;
    uint mh;
    uint mi;
    uint keys;
    // Query rows per workgroup tq (a power of 2, at most 16; bits 0-4),
    // keys per tile tk (bits 5-13): tq·tk at most SFLOATS and, with
    // more than one row, tk·(dim + 1) and tk·vdim at most KVFLOATS; the
    // log2 of the lanes of a dot group (bits 14-15, 0 without SUBGROUP);
    // with SPLIT or COMBINE, key tiles per chunk (bits 16-31).
    uint tiles;
    // Element offsets of Q, K and V and the strides along batch, head and
    // position of Q, K, V and Y; K's along its depth too (kᵀ given as
    // such lies with its depth strided).
    uint qO, qB, qH, qS;
    uint kO, kB, kH, kS, kD;
    uint vO, vB, vH, vS;
    uint yB, yH, yS;
} p;

shared float qs[QFLOATS];
shared float kv[KVFLOATS];
shared float sc[SFLOATS];

// roundHalf rounds x to the nearest float16 value, ties to even, as an fp32
// value, exactly as attention.comp's roundHalf.
float roundHalf(float x) {
    if (isnan(x) || isinf(x)) {
        return x;
    }
    int ex = int((floatBitsToUint(x) >> 23) & 0xffu) - 127;
    int q = max(ex, -14) - 10;
    float r = ldexp(roundEven(ldexp(x, -q)), q);
    return abs(r) > 65504.0 ? uintBitsToFloat(floatBitsToUint(x) & 0x80000000u | 0x7f800000u) : r;
}

// keyAt returns element d of key j (past, then new) of kv head kh.
float keyAt(uint b, uint kh, uint j, uint d) {
    if (j < p.past) {
        return float(pastK[((b * p.hkv + kh) * p.past + j) * p.dim + d]);
    }
    return float(k[p.kO + b * p.kB + kh * p.kH + (j - p.past) * p.kS + d * p.kD]);
}

// valueAt returns element d of value j (past, then new) of kv head kh.
float valueAt(uint b, uint kh, uint j, uint d) {
    if (j < p.past) {
        return float(pastV[((b * p.hkv + kh) * p.past + j) * p.vdim + d]);
    }
    return float(v[p.vO + b * p.vB + kh * p.vH + (j - p.past) * p.vS + d]);
}

// masked tells whether key j is hidden from query i of head h of batch
// entry b by the mask, is_causal or nonpad_kv_seqlen; bias is the float
// mask's value otherwise.
bool masked(uint b, uint h, uint i, uint j, int valid, int offset, out float bias) {
    bias = 0.0;
    bool hasMask = (p.flags & 6u) != 0u;
    if (hasMask && j >= p.keys || int(j) >= valid || (p.flags & 8u) != 0u && int(j) > int(i) + offset) {
        return true;
    }
    if (!hasMask) {
        return false;
    }
    uint at = b * p.mb + h * p.mh + i * p.mi + j;
    if ((p.flags & 4u) != 0u) {
        return (((mask[at >> 2] >> (8u * (at & 3u))) & 0xffu) == 0u) != ((p.flags & 128u) != 0u);
    }
#ifdef HALF
    bias = unpackHalf2x16(mask[at >> 1u])[at & 1u];
#else
    bias = uintBitsToFloat(mask[at]);
#endif
    return isinf(bias) && bias < 0.0;
}

// combine merges the chunks' partial results of every output row (see
// the top of the file).
void combine(uint chunks) {
    const float NEG_INF = uintBitsToFloat(0xff800000u);
    uint width = p.vdim + 2u;
    for (uint e = gl_GlobalInvocationID.x; e < p.batch * p.hq * p.sq * p.vdim; e += gl_NumWorkGroups.x * WG) {
        uint row = e / p.vdim, d = e % p.vdim;
        uint i = row % p.sq, h = (row / p.sq) % p.hq, b = row / (p.sq * p.hq);
        uint base = row * chunks * width;
        float top = NEG_INF;
        for (uint c = 0u; c < chunks; c++) {
            top = max(top, part[base + c * width]);
        }
        float sum = 0.0, a = 0.0;
        for (uint c = 0u; c < chunks && !isinf(top); c++) {
            uint at = base + c * width;
            float m = part[at];
            float w = isinf(m) ? 0.0 : exp(m - top);
            sum += part[at + 1u] * w;
            a += part[at + 2u + d] * w;
        }
        float f = sum > 0.0 ? 1.0 / sum : 0.0;
        y[b * p.yB + h * p.yH + i * p.yS + d] = DATA(a * f);
    }
}

void main() {
    const float NEG_INF = uintBitsToFloat(0xff800000u);
#ifdef SUBGROUP
    uint lid = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
#else
    uint lid = gl_LocalInvocationID.x;
#endif
    uint tq = p.tiles & 31u, tk = (p.tiles >> 5) & 511u, group = 1u << ((p.tiles >> 14) & 3u);
    // chunk: the keys of each chunk (SPLIT, COMBINE), all of them
    // otherwise.
    uint total = p.past + p.skv;
    uint chunk = SPLIT || COMBINE ? (p.tiles >> 16) * tk : total;
    uint chunks = SPLIT || COMBINE ? (total + chunk - 1u) / chunk : 1u;
    if (COMBINE) {
        combine(chunks);
        return;
    }
    uint lanes = WG / tq;
    // With one query row, each key is read by the one dot group that
    // scores it and each value's column by the one lane that owns it: they
    // read K and V where they lie, not staged (and tk is up to SFLOATS).
    bool direct = tq == 1u;
    uint r = lid / lanes, lane = lid % lanes;
    // A row scores span keys at once, one a dot group: lane g of group
    // kl sums the dims g, g + group, ... of key kl.
    uint span = lanes / group, kl = lane / group, g = lane % group;
    uint qstride = p.dim + 1u;
    uint kstride = p.dim + 1u;
    bool halfSoftmax = (p.flags & 64u) != 0u;
    uint passes = halfSoftmax ? 2u : 1u;
    uint tiles = (p.sq + tq - 1u) / tq;
    uint per = (p.vdim + lanes - 1u) / lanes;
    for (uint item = gl_WorkGroupID.x; item < p.batch * p.hq * tiles * chunks; item += gl_NumWorkGroups.x) {
        uint ck = item % chunks, t = item / chunks;
        uint i0 = (t % tiles) * tq, h = (t / tiles) % p.hq, b = t / (tiles * p.hq);
        uint kh = h / (p.hq / p.hkv);
        uint i = i0 + r;
        bool live = i < p.sq;
        int valid = int(total), offset = int(p.past);
        if ((p.flags & 16u) != 0u) {
            valid = nonpad[2u * b];
            offset = valid - int(p.sq);
        }
        // The keys after end are masked for every row of the tile.
        int end = min(int(total), valid);
        if ((p.flags & 6u) != 0u) {
            end = min(end, int(p.keys));
        }
        if ((p.flags & 8u) != 0u) {
            end = min(end, int(min(i0 + tq, p.sq)) + offset);
        }
        // This chunk's keys: [from, to).
        uint from = ck * chunk, to = min(uint(max(end, 0)), from + chunk);
        barrier();
        for (uint e = lid; e < tq * p.dim; e += WG) {
            uint rr = e / p.dim, d = e % p.dim;
            qs[rr * qstride + d] = i0 + rr < p.sq ? float(q[p.qO + b * p.qB + h * p.qH + (i0 + rr) * p.qS + d]) : 0.0;
        }
        float top = NEG_INF, sum = 0.0, inv = 0.0;
        float acc[MAXD / 4];
        for (uint pass = 0u; pass < passes; pass++) {
            // last: the pass that adds p·v; rounded: its probabilities
            // are rounded to float16 from the first pass's top and sum.
            bool last = pass + 1u == passes;
            bool rounded = halfSoftmax && last;
            if (rounded) {
                inv = sum > 0.0 ? 1.0 / sum : 0.0;
            }
            for (uint c = 0u; c < per; c++) {
                acc[c] = 0.0;
            }
            for (uint j0 = from; j0 < to; j0 += tk) {
                uint n = min(tk, to - j0);
                barrier();
                for (uint e = lid; !direct && e < n * p.dim; e += WG) {
                    uint jj = e / p.dim, d = e % p.dim;
                    kv[jj * kstride + d] = keyAt(b, kh, j0 + jj, d);
                }
                barrier();
                // The loop is uniform over the workgroup (n and span are),
                // so that every lane of a dot group takes the shuffles.
                for (uint jb = 0u; jb < n; jb += span) {
                    uint jj = jb + kl, j = j0 + jj;
                    float bias;
                    bool hidden = !live || jj >= n || masked(b, h, i, j, valid, offset, bias);
                    float s = 0.0;
                    if (!hidden && direct) {
                        for (uint d = g; d < p.dim; d += group) {
                            s += qs[r * qstride + d] * keyAt(b, kh, j, d);
                        }
                    } else if (!hidden) {
                        for (uint d = g; d < p.dim; d += group) {
                            s += qs[r * qstride + d] * kv[jj * kstride + d];
                        }
                    }
#ifdef SUBGROUP
                    for (uint o = 1u; o < group; o <<= 1) {
                        s += subgroupShuffleXor(s, o);
                    }
#endif
                    if (hidden) {
                        s = NEG_INF;
                    } else {
                        s *= p.scale;
                        if (p.softcap > 0.0) {
                            s = p.softcap * tanh(s / p.softcap);
                        }
                        s += bias;
                        if (halfSoftmax) {
                            s = roundHalf(s);
                        }
                    }
                    if (jj < n && g == 0u) {
                        sc[r * tk + jj] = s;
                    }
                }
                barrier();
                if (last && !direct) {
                    for (uint e = lid; e < n * p.vdim; e += WG) {
                        uint jj = e / p.vdim, d = e % p.vdim;
                        kv[e] = valueAt(b, kh, j0 + jj, d);
                    }
                }
                // The new maximum and the factor of what was summed.
                float m = top;
                if (!rounded) {
                    for (uint jj = 0u; jj < n; jj++) {
                        m = max(m, sc[r * tk + jj]);
                    }
                }
                float alpha = m == top ? 1.0 : isinf(top) ? 0.0 : exp(top - m);
                top = m;
                barrier();
                for (uint jj = lane; jj < n; jj += lanes) {
                    float s = sc[r * tk + jj];
                    float e = isinf(s) ? 0.0 : exp(s - m);
                    if (rounded) {
                        e = roundHalf(e * inv);
                    }
                    sc[r * tk + jj] = e;
                }
                barrier();
                float part = 0.0;
                for (uint jj = 0u; jj < n; jj++) {
                    part += sc[r * tk + jj];
                }
                sum = sum * alpha + part;
                if (last) {
                    for (uint c = 0u; c < per; c++) {
                        uint d = lane + c * lanes;
                        float a = acc[c] * alpha;
                        if (d < p.vdim && direct) {
                            for (uint jj = 0u; jj < n; jj++) {
                                a += sc[r * tk + jj] * valueAt(b, kh, j0 + jj, d);
                            }
                        } else if (d < p.vdim) {
                            for (uint jj = 0u; jj < n; jj++) {
                                a += sc[r * tk + jj] * kv[jj * p.vdim + d];
                            }
                        }
                        acc[c] = a;
                    }
                }
            }
        }
        if (live && SPLIT) {
            uint at = (((b * p.hq + h) * p.sq + i) * chunks + ck) * (p.vdim + 2u);
            part[at] = top;
            part[at + 1u] = sum;
            for (uint c = 0u; c < per; c++) {
                uint d = lane + c * lanes;
                if (d < p.vdim) {
                    part[at + 2u + d] = acc[c];
                }
            }
        } else if (live) {
            float f = halfSoftmax ? 1.0 : sum > 0.0 ? 1.0 / sum : 0.0;
            uint yoff = b * p.yB + h * p.yH + i * p.yS;
            for (uint c = 0u; c < per; c++) {
                uint d = lane + c * lanes;
                if (d < p.vdim) {
                    y[yoff + d] = DATA(acc[c] * f);
                }
            }
        }
    }
}
