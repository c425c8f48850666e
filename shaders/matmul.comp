// Batched fp32 matrix product with an optional bias, for MatMul and Gemm:
// y[b, m, n] = alpha * sum_k a[b, m, k] * b[b, k, n] + beta * c[m, n]
// (+ s[b, m, n], a residual of y's shape, when bound).
// Every operand is read through element strides (push constants), so
// transposes, 1-D promotion, batch broadcasting and the broadcast of c cost
// nothing. y is contiguous, batch by batch.
//
// The specialization constant TILED picks the schedule. 0 (the default):
// each invocation computes 8 rows by 4 columns of y in registers with no
// shared memory, which suits CPU implementations such as lavapipe. 1: each
// workgroup of 16x16 invocations computes a 64x64 tile of y from 16-deep
// slices of a and b staged in shared memory, which suits GPUs. 2 + j, for
// products of few rows (decode steps): each workgroup computes up to 4
// rows by C = 2^j columns of y, its 256 invocations split into C columns
// by 256 / C slices of the k dimension, each invocation summing every
// (256 / C)-th k of its column for each row, and the slices' sums are
// added up in shared memory (see gemv). Compiled with SUBGROUP
// (matmul_sg.spv, matmul_f16_sg.spv, matmul_f16w_sg.spv, for devices with
// subgroup shuffles), the slices that share a subgroup add their sums by
// shuffles first, so that one barrier, or none, replaces the tree's.
//
// Split-K: with bit 8 of TILED set (SPLIT, on the tiled schedule), the
// workgroup count is the tiles times p.splits, split s of a tile covers
// the k steps [s * p.per, (s + 1) * p.per) of 16, and it writes its raw
// sums to part[s * total + e] (e the output's index, total y's size).
// A second dispatch with bit 9 set (REDUCE), one invocation per output
// element, adds the splits' sums and stores them: alpha, beta * c and the
// residual once, after the full sum.
//
// Compiled with HALF_WEIGHTS defined (matmul_f16w.spv), b is read as
// float16_t through 16-bit storage (half the memory and bandwidth of
// constant weights); the products still accumulate in fp32.
//
// Compiled with HALF and COOPMAT defined (matmul_f16_cm.spv, which needs
// a glslc that knows GL_KHR_cooperative_matrix), the tiled schedule
// multiplies on the device's matrix units (VK_KHR_cooperative_matrix):
// see matrixUnits below. Its workgroup is four subgroups (specialization
// constant 1: four times the device's subgroup size), constants 2, 3
// and 4 are the matrix unit's M, N and K and 5 the fragments a subgroup
// computes along each side. Each slice of a and b is read into registers
// 16 bytes at a time while the slice before it is multiplied, and stored
// in shared memory after (fetch, place).
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

#ifdef SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif

#ifdef COOPMAT
layout(local_size_x_id = 1) in;
#else
layout(local_size_x = 256) in;
#endif

layout(constant_id = 0) const int TILED = 0;

const int SCHEDULE = TILED & 255;
const bool SPLIT = (TILED & 256) != 0;
const bool REDUCE = (TILED & 512) != 0;

layout(std430, set = 0, binding = 0) readonly buffer A { DATA a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { WEIGHT b[]; };
layout(std430, set = 0, binding = 2) readonly buffer C { DATA c[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Y { DATA y[]; };
layout(std430, set = 0, binding = 4) readonly buffer S { DATA s[]; };
layout(std430, set = 0, binding = 5) buffer Part { float part[]; };

layout(push_constant) uniform Params {
    uint m;
    uint n;
    uint k;
    // batches is the number of output matrices, brank the rank of their
    // batch shape bdims; bsa and bsb are the batch strides of a and b.
    uint batches;
    uint brank;
    // flags: bit 0, c is bound and beta * c is added; bit 1, s is bound
    // and added.
    uint flags;
    float alpha;
    float beta;
    uint sam;
    uint sak;
    uint sbk;
    uint sbn;
    uint scm;
    uint scn;
    uint bdims[4];
    uint bsa[4];
    uint bsb[4];
    // splits and per are split-K's splits and k steps per split.
    uint splits;
    uint per;
} p;

// red holds the gemv schedule's partial sums: red[r][lid] is invocation
// lid's sum for row r of its row block.
#ifndef COOPMAT
shared float ta[16][64];
shared float tb[16][64];
shared float red[4][256];
#endif

// offsets returns the offsets of batch bi's matrices in a and b.
uvec2 offsets(uint bi) {
    uvec2 o = uvec2(0u);
    for (int d = int(p.brank) - 1; d >= 0; d--) {
        uint i = bi % p.bdims[d];
        bi /= p.bdims[d];
        o += i * uvec2(p.bsa[d], p.bsb[d]);
    }
    return o;
}

void store(uint bi, uint row, uint col, float acc) {
    float v = p.alpha * acc;
    if ((p.flags & 1u) != 0u) {
        v += p.beta * float(c[row * p.scm + col * p.scn]);
    }
    uint at = (bi * p.m + row) * p.n + col;
    if ((p.flags & 2u) != 0u) {
        v += float(s[at]);
    }
    y[at] = DATA(v);
}

#ifndef COOPMAT
void blocked() {
    // A workgroup covers 32 rows and 256 columns of y: invocation lid
    // computes rows 8 * (lid / 64) + i and columns lid % 64 + 64 * j, so
    // neighbouring invocations read neighbouring elements of b and the
    // same elements of a.
    uint tm = (p.m + 31u) / 32u;
    uint tn = (p.n + 255u) / 256u;
    uint total = p.batches * tm * tn;
    uint lid = gl_LocalInvocationID.x;
    for (uint t = gl_WorkGroupID.x; t < total; t += gl_NumWorkGroups.x) {
        uint bi = t / (tm * tn);
        uint r = t % (tm * tn);
        uint m0 = (r / tn) * 32u + (lid / 64u) * 8u;
        uint n0 = (r % tn) * 256u + lid % 64u;
        if (m0 >= p.m || n0 >= p.n) {
            continue;
        }
        uvec2 o = offsets(bi);
        uint ra[8];
        uint cb[4];
        for (uint i = 0u; i < 8u; i++) {
            ra[i] = o.x + min(m0 + i, p.m - 1u) * p.sam;
        }
        for (uint j = 0u; j < 4u; j++) {
            cb[j] = o.y + min(n0 + 64u * j, p.n - 1u) * p.sbn;
        }
        vec4 acc[8];
        for (uint i = 0u; i < 8u; i++) {
            acc[i] = vec4(0.0);
        }
        for (uint kk = 0u; kk < p.k; kk++) {
            vec4 bv = vec4(float(b[cb[0] + kk * p.sbk]), float(b[cb[1] + kk * p.sbk]), float(b[cb[2] + kk * p.sbk]), float(b[cb[3] + kk * p.sbk]));
            for (uint i = 0u; i < 8u; i++) {
                acc[i] += float(a[ra[i] + kk * p.sak]) * bv;
            }
        }
        for (uint i = 0u; i < 8u && m0 + i < p.m; i++) {
            for (uint j = 0u; j < 4u && n0 + 64u * j < p.n; j++) {
                store(bi, m0 + i, n0 + 64u * j, acc[i][j]);
            }
        }
    }
}

void tiled() {
    uint tm = (p.m + 63u) / 64u;
    uint tn = (p.n + 63u) / 64u;
    uint tiles = p.batches * tm * tn;
    uint total = SPLIT ? tiles * p.splits : tiles;
    uint lid = gl_LocalInvocationID.x;
    uint tx = lid % 16u;
    uint ty = lid / 16u;
    for (uint t = gl_WorkGroupID.x; t < total; t += gl_NumWorkGroups.x) {
        uint split = t / tiles;
        uint bi = (t % tiles) / (tm * tn);
        uint r = t % (tm * tn);
        uint m0 = (r / tn) * 64u;
        uint n0 = (r % tn) * 64u;
        uvec2 o = offsets(bi);
        uint kb = SPLIT ? split * p.per * 16u : 0u;
        uint ke = SPLIT ? min(p.k, kb + p.per * 16u) : p.k;
        float acc[4][4];
        for (uint i = 0u; i < 4u; i++) {
            for (uint j = 0u; j < 4u; j++) {
                acc[i][j] = 0.0;
            }
        }
        for (uint k0 = kb; k0 < ke; k0 += 16u) {
            for (uint q = lid; q < 1024u; q += 256u) {
                uint kk = q / 64u;
                uint e = q % 64u;
                bool ink = k0 + kk < ke;
                ta[kk][e] = ink && m0 + e < p.m ? float(a[o.x + (m0 + e) * p.sam + (k0 + kk) * p.sak]) : 0.0;
                tb[kk][e] = ink && n0 + e < p.n ? float(b[o.y + (k0 + kk) * p.sbk + (n0 + e) * p.sbn]) : 0.0;
            }
            barrier();
            for (uint kk = 0u; kk < 16u; kk++) {
                float av[4];
                float bv[4];
                for (uint i = 0u; i < 4u; i++) {
                    av[i] = ta[kk][ty + 16u * i];
                    bv[i] = tb[kk][tx + 16u * i];
                }
                for (uint i = 0u; i < 4u; i++) {
                    for (uint j = 0u; j < 4u; j++) {
                        acc[i][j] += av[i] * bv[j];
                    }
                }
            }
            barrier();
        }
        for (uint i = 0u; i < 4u; i++) {
            for (uint j = 0u; j < 4u; j++) {
                uint row = m0 + ty + 16u * i;
                uint col = n0 + tx + 16u * j;
                if (row < p.m && col < p.n) {
                    if (SPLIT) {
                        part[(split * p.batches + bi) * p.m * p.n + row * p.n + col] = acc[i][j];
                    } else {
                        store(bi, row, col, acc[i][j]);
                    }
                }
            }
        }
    }
}

#endif

#ifdef COOPMAT
#include "matrixunits.glsl"

// a8 and b8 read a and b 8 halves (16 bytes) at a time where a run of 8
// along the contiguous axis starts at a multiple of 8 from the binding.
layout(std430, set = 0, binding = 0) readonly buffer A8 { uvec4 a8[]; };
layout(std430, set = 0, binding = 1) readonly buffer B8 { uvec4 b8[]; };

// A slice of a or b: element (i, j) of the TI x TJ slice (a: rows by
// depth, b: depth by columns) is at base + i * si + j * sj, and only ni
// rows and nj columns are inside the matrix; its units run along j where
// sj is 1 (alongJ), else down i; vec says they can be read 16 bytes at a
// time (the other stride and the base multiples of 8).
struct Slice {
    uint base;
    uint si;
    uint sj;
    uint ni;
    uint nj;
    bool alongJ;
    bool vec;
};

Slice slice(uint base, uint si, uint sj, uint ni, uint nj) {
    bool alongJ = sj == 1u;
    bool vec = base % 8u == 0u && (alongJ ? si % 8u == 0u : si == 1u && sj % 8u == 0u);
    return Slice(base, si, sj, ni, nj, alongJ, vec);
}

// fast says whether unit q of slice sl of a (isA) or b is read 16 bytes
// at a time, whole inside the matrix; ij is its first half's place.
bool fast(bool isA, Slice sl, uint q, out uvec2 ij) {
    ij = unitAt(q, sl.alongJ, isA ? BM : BK, isA ? BK : BN);
    return sl.vec && (sl.alongJ ? ij.x < sl.ni && ij.y + 8u <= sl.nj : ij.y < sl.nj && ij.x + 8u <= sl.ni);
}

// ra and rb hold an invocation's units of the next slice of a and b.
uvec4 ra[UMAX];
uvec4 rb[UMAX];

// fetch reads the invocation's fast units of slices sa and sb into ra
// and rb.
void fetch(Slice sa, Slice sb) {
    uint lid = gl_LocalInvocationID.x;
    uint wg = gl_WorkGroupSize.x;
    [[unroll]] for (uint u = 0u; u < UMAX; u++) {
        uint q = lid + u * wg;
        uvec2 ij;
        if (u * wg < UNITS_A && q < UNITS_A && fast(true, sa, q, ij)) {
            ra[u] = a8[(sa.base + ij.x * sa.si + ij.y * sa.sj) / 8u];
        }
        if (u * wg < UNITS_B && q < UNITS_B && fast(false, sb, q, ij)) {
            rb[u] = b8[(sb.base + ij.x * sb.si + ij.y * sb.sj) / 8u];
        }
    }
}

// place stores the units of slices sa and sb in shared memory: the fast
// ones from ra and rb, the others (past the ends, or not aligned to 16
// bytes) read now, a half at a time, 0 outside the matrix.
void place(Slice sa, Slice sb) {
    uint lid = gl_LocalInvocationID.x;
    uint wg = gl_WorkGroupSize.x;
    [[unroll]] for (uint u = 0u; u < UMAX; u++) {
        uint q = lid + u * wg;
        uvec2 ij;
        if (u * wg < UNITS_A && q < UNITS_A && fast(true, sa, q, ij)) {
            placeA(sa.alongJ, ij, ra[u]);
        }
        if (u * wg < UNITS_B && q < UNITS_B && fast(false, sb, q, ij)) {
            placeB(sb.alongJ, ij, rb[u]);
        }
    }
    for (uint q = lid; q < UNITS_A + UNITS_B; q += wg) {
        bool isA = q < UNITS_A;
        uint qq = isA ? q : q - UNITS_A;
        Slice sl = isA ? sa : sb;
        uvec2 ij;
        if (fast(isA, sl, qq, ij)) {
            continue;
        }
        for (uint e = 0u; e < 8u; e++) {
            uint i = sl.alongJ ? ij.x : ij.x + e;
            uint j = sl.alongJ ? ij.y + e : ij.y;
            uint at = sl.base + i * sl.si + j * sl.sj;
            bool inside = i < sl.ni && j < sl.nj;
            if (isA) {
                putA(i * SA + j, inside ? a[at] : float16_t(0.0));
            } else {
                putB(i * SB + j, inside ? b[at] : float16_t(0.0));
            }
        }
    }
}

// matrixUnits is the tiled schedule on the matrix units: the same tiles,
// split-K and store as tiled, with fp16 products accumulated in fp32; a
// tile's next slice is fetched before the current one is multiplied.
void matrixUnits() {
    uint tm = (p.m + BM - 1u) / BM;
    uint tn = (p.n + BN - 1u) / BN;
    uint tiles = p.batches * tm * tn;
    uint total = SPLIT ? tiles * p.splits : tiles;
    uint sg = gl_SubgroupID;
    // The subgroup's fragments start at row wm and column wn of the tile.
    uint wm = (sg / 2u) * F * LM;
    uint wn = (sg % 2u) * F * LN;
    for (uint t = gl_WorkGroupID.x; t < total; t += gl_NumWorkGroups.x) {
        uint split = t / tiles;
        uint bi = (t % tiles) / (tm * tn);
        uint r = t % (tm * tn);
        uint m0 = (r / tn) * BM;
        uint n0 = (r % tn) * BN;
        uvec2 o = offsets(bi);
        // Split-K's steps are 16 deep (see splitProducts).
        uint kb = SPLIT ? split * p.per * 16u : 0u;
        uint ke = SPLIT ? min(p.k, kb + p.per * 16u) : p.k;
        clearAcc();
        // k0 and n0 are multiples of 8, so a slice's units start at
        // multiples of 8 when the strides and the batch's offset are.
        Slice sa, sb;
        if (kb < ke) {
            sa = slice(o.x + m0 * p.sam + kb * p.sak, p.sam, p.sak, p.m - m0, ke - kb);
            sb = slice(o.y + kb * p.sbk + n0 * p.sbn, p.sbk, p.sbn, ke - kb, p.n - n0);
            fetch(sa, sb);
        }
        for (uint k0 = kb; k0 < ke; k0 += BK) {
            place(sa, sb);
            barrier();
            if (k0 + BK < ke) {
                uint k1 = k0 + BK;
                sa = slice(o.x + m0 * p.sam + k1 * p.sak, p.sam, p.sak, p.m - m0, ke - k1);
                sb = slice(o.y + k1 * p.sbk + n0 * p.sbn, p.sbk, p.sbn, ke - k1, p.n - n0);
                fetch(sa, sb);
            }
            multiplySlice(wm, wn);
            barrier();
        }
        uint at = sg * LM * LN;
        [[unroll]] for (uint i = 0u; i < FMAX; i++) {
            [[unroll]] for (uint j = 0u; j < FMAX; j++) {
                if (i >= F || j >= F) {
                    continue;
                }
                stage(i * FMAX + j, at);
                for (uint e = gl_SubgroupInvocationID; e < LM * LN; e += gl_SubgroupSize) {
                    uint row = m0 + wm + i * LM + e / LN;
                    uint col = n0 + wn + j * LN + e % LN;
                    if (row < p.m && col < p.n) {
                        if (SPLIT) {
                            part[(split * p.batches + bi) * p.m * p.n + row * p.n + col] = co[at + e];
                        } else {
                            store(bi, row, col, co[at + e]);
                        }
                    }
                }
                // The next fragment overwrites co only after these reads.
                subgroupBarrier();
            }
        }
    }
}
#endif

#ifndef COOPMAT
void gemv() {
    // C columns by S slices of k. Where b is read along n (b[k, n] row
    // major, sbn == 1), invocation lid has column lid % C and slice lid / C,
    // so neighbouring invocations read neighbouring elements of b; where b
    // is contiguous along k instead (a transposed b: sbk == 1), column
    // lid / S and slice lid % S, so that they read neighbouring k. Slice ks
    // sums k = ks, ks + S, ks + 2S, ... into one accumulator per row.
    uint cols = 1u << uint(max(SCHEDULE - 2, 0));
    uint slices = 256u / cols;
    uint lid = gl_LocalInvocationID.x;
#ifdef SUBGROUP
    // Invocations numbered subgroup by subgroup, so that the partners of
    // the shuffles below (lid ^ h * step, h * step less than the subgroup
    // size, a power of two) are lanes of the same subgroup. That needs
    // full subgroups, which devices make of a workgroup a multiple of
    // their size; without them the tree below adds the slices' sums.
    bool shuffled = gl_NumSubgroups * gl_SubgroupSize == 256u;
    if (shuffled) {
        lid = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
    }
#endif
    bool alongK = p.sbk == 1u && p.sbn != 1u;
    uint c = alongK ? lid / slices : lid % cols;
    uint ks = alongK ? lid % slices : lid / cols;
    // The partner of lid in the reduction, h slices further, is lid + h * step.
    uint step = alongK ? 1u : cols;
    uint tm = (p.m + 3u) / 4u;
    uint tn = (p.n + cols - 1u) / cols;
    uint total = p.batches * tm * tn;
    for (uint t = gl_WorkGroupID.x; t < total; t += gl_NumWorkGroups.x) {
        uint bi = t / (tm * tn);
        uint r = t % (tm * tn);
        uint m0 = (r / tn) * 4u;
        uint col = (r % tn) * cols + c;
        vec4 acc = vec4(0.0);
        if (col < p.n) {
            uvec2 o = offsets(bi);
            // Rows past m read row m - 1 again; their sums are not stored.
            uvec4 ra = o.x + min(uvec4(m0) + uvec4(0u, 1u, 2u, 3u), uvec4(p.m - 1u)) * p.sam;
            uint cb = o.y + col * p.sbn;
            uint kk = ks;
            for (; kk + 3u * slices < p.k; kk += 4u * slices) {
                uint k1 = kk + slices;
                uint k2 = k1 + slices;
                uint k3 = k2 + slices;
                float b0 = float(b[cb + kk * p.sbk]);
                float b1 = float(b[cb + k1 * p.sbk]);
                float b2 = float(b[cb + k2 * p.sbk]);
                float b3 = float(b[cb + k3 * p.sbk]);
                acc += b0 * vec4(float(a[ra.x + kk * p.sak]), float(a[ra.y + kk * p.sak]), float(a[ra.z + kk * p.sak]), float(a[ra.w + kk * p.sak]));
                acc += b1 * vec4(float(a[ra.x + k1 * p.sak]), float(a[ra.y + k1 * p.sak]), float(a[ra.z + k1 * p.sak]), float(a[ra.w + k1 * p.sak]));
                acc += b2 * vec4(float(a[ra.x + k2 * p.sak]), float(a[ra.y + k2 * p.sak]), float(a[ra.z + k2 * p.sak]), float(a[ra.w + k2 * p.sak]));
                acc += b3 * vec4(float(a[ra.x + k3 * p.sak]), float(a[ra.y + k3 * p.sak]), float(a[ra.z + k3 * p.sak]), float(a[ra.w + k3 * p.sak]));
            }
            for (; kk < p.k; kk += slices) {
                float bv = float(b[cb + kk * p.sbk]);
                acc += bv * vec4(float(a[ra.x + kk * p.sak]), float(a[ra.y + kk * p.sak]), float(a[ra.z + kk * p.sak]), float(a[ra.w + kk * p.sak]));
            }
        }
#ifdef SUBGROUP
        if (shuffled) {
            // After the shuffle at offset h * step, each invocation holds
            // the sum of 2h slices, ks with its low bits cleared up to
            // 2h; the loop ends at h slices summed, all of them where a
            // subgroup holds every slice of its columns. Otherwise the
            // invocations of ks a multiple of h hold the sums of slices /
            // h groups, which slice 0 adds up from shared memory.
            uint h = 1u;
            for (; h < slices && h * step < gl_SubgroupSize; h *= 2u) {
                acc += subgroupShuffleXor(acc, h * step);
            }
            if (h < slices) {
                for (uint i = 0u; i < 4u; i++) {
                    red[i][lid] = acc[i];
                }
                barrier();
                if (ks == 0u) {
                    for (uint j = 1u; j < slices / h; j++) {
                        for (uint i = 0u; i < 4u; i++) {
                            acc[i] += red[i][lid + j * h * step];
                        }
                    }
                }
                // The next tile's sums overwrite red only after these
                // reads.
                barrier();
            }
            if (ks == 0u && col < p.n) {
                for (uint i = 0u; i < 4u && m0 + i < p.m; i++) {
                    store(bi, m0 + i, col, acc[i]);
                }
            }
            continue;
        }
#endif
        // Every invocation writes its sums (zero past n) before the first
        // barrier, so the reduction reads no uninitialised shared memory.
        for (uint i = 0u; i < 4u; i++) {
            red[i][lid] = acc[i];
        }
        barrier();
        for (uint h = slices / 2u; h > 0u; h /= 2u) {
            if (ks < h) {
                for (uint i = 0u; i < 4u; i++) {
                    red[i][lid] += red[i][lid + h * step];
                }
            }
            barrier();
        }
        if (ks == 0u && col < p.n) {
            for (uint i = 0u; i < 4u && m0 + i < p.m; i++) {
                store(bi, m0 + i, col, red[i][lid]);
            }
        }
        // The next tile's sums overwrite red only after these reads.
        barrier();
    }
}
#endif

// reduce adds the splits' partial sums of each output element and stores
// the result (see Split-K above).
void reduce() {
    uint mn = p.m * p.n;
    uint total = p.batches * mn;
    uint stride = gl_NumWorkGroups.x * 256u;
    for (uint e = gl_GlobalInvocationID.x; e < total; e += stride) {
        float v = 0.0;
        for (uint i = 0u; i < p.splits; i++) {
            v += part[i * total + e];
        }
        store(e / mn, (e % mn) / p.n, e % p.n, v);
    }
}

#ifdef COOPMAT
void main() {
    matrixUnits();
}
#else
void main() {
    if (REDUCE) {
        reduce();
    } else if (SCHEDULE >= 2) {
        gemv();
    } else if (SCHEDULE != 0) {
        tiled();
    } else {
        blocked();
    }
}
#endif
