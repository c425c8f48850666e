// Implicit-GEMM fp32 convolution with shared memory, the GPU schedule of
// Conv, FusedConv and ConvTranspose (conv.comp keeps depthwise and narrow
// groups, and CPU implementations such as lavapipe, where barriers are
// slow). One to three spatial axes (fewer axes are the trailing ones of
// three, the leading ones of size 1), groups, strides, dilations, padding,
// an optional bias, an optional residual Sum (FusedConv's input 3, of the
// output's shape, added before the activation) and an activation.
//
// Per group, the mg output channels are the GEMM's rows, the positions of
// every image (batch times output size) its columns, and K = cg input
// channels times the kernel taps its depth, k = ci * taps + tap, the
// order of W [M, cg, k...]. A workgroup of 256 invocations computes a tile
// of 64 rows by 64 columns, stepping through K 16 at a time: each step it
// stages the tile's weights [64 x 16] and the gathered input patch
// [16 x 64] in shared memory (im2col on the fly: taps outside the input,
// in the padding, read 0) and each invocation accumulates a 4x4 register
// block, rows 4 * (lid / 16) and columns 4 * (lid % 16) on. The next
// step's global reads are issued before the current step's products. An
// invocation gathers the patch for its own 4 columns at depth lid / 16,
// so it decomposes k into channel and tap once per step; POINT (one tap,
// 1x1 kernels) skips that. Positions outside the input and rows, columns
// and depths past the ends are checked explicitly, with signed
// coordinates and no division or remainder of negative values.
//
// Split-K: with SPLIT set, the workgroup count is the tiles times
// p.splits, and split s of a tile covers K steps [s * p.per, (s + 1) *
// p.per); it writes its raw sums to part[s * total + e] (e the output's
// index, total its size). A second dispatch with REDUCE set, one
// invocation per output element, adds the splits' partials and applies
// the epilogue: bias, Sum and activation once, after the full sum.
// Without SPLIT the GEMM applies the epilogue in its store.
//
// ConvTranspose (TRANSPOSED, W [C, mg, k...]) is a GEMM per phase: the outputs whose offsets modulo the strides are
// one phase rr read, along each axis, the taps t0 + j * tstep (j below
// nt; tapStep and firstTap of taps.glsl), the input a tap reaches
// stepping back by tstep * dil / st per j. A tile's columns are the
// outputs of one phase (each image's grid of them, ceil(odim / st) a
// side, those past the output checked explicitly), its depth K = cg
// input channels times the phase's taps: no product of a tap that does
// not reach the output (a quarter of a 2-D stride-2 kernel's) and no
// scatter. A phase no tap reaches has depth 0, its outputs the bias.
//
// Compiled with HALF_WEIGHTS defined (convgemm_f16w.spv), w is read as
// float16_t through 16-bit storage; the products still accumulate in fp32.
//
// Compiled with HALF and COOPMAT defined (convgemm_f16_cm.spv, which
// needs a glslc that knows GL_KHR_cooperative_matrix), the GEMM runs on
// the device's matrix units (VK_KHR_cooperative_matrix), as matmul.comp's
// matrixUnits does: see matrixUnits below; constants 1 to 5 are the
// same (the workgroup, the unit's M, N and K, the fragments a side a
// subgroup computes). Each slice's weights and gathered patch are read
// into registers while the slice before it is multiplied (fetch, place).
// The reduction of its split-K runs on the HALF variant.
//
// The specialization constant OP holds SPLIT in bit 8, REDUCE in bit 9,
// POINT in bit 10 and TRANSPOSED in bit 11; the activation is the push
// constants' (bits 8-15 of flags, see epilogue.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require

#include "half.glsl"

#ifdef COOPMAT
layout(local_size_x_id = 1) in;
#else
layout(local_size_x = 256) in;
#endif

layout(constant_id = 0) const int OP = 0;

const bool SPLIT = (OP & 256) != 0;
const bool REDUCE = (OP & 512) != 0;
const bool POINT = (OP & 1024) != 0;
const bool TRANSPOSED = (OP & 2048) != 0;

#include "act.glsl"
#include "taps.glsl"

// TM x TN is a workgroup's tile, KS the depth of a step.
const uint TM = 64u;
const uint TN = 64u;
const uint KS = 16u;

layout(std430, set = 0, binding = 0) readonly buffer X { DATA x[]; };
layout(std430, set = 0, binding = 1) readonly buffer W { WEIGHT w[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias { DATA bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Y { DATA y[]; };
layout(std430, set = 0, binding = 4) readonly buffer Sum { DATA sum[]; };
layout(std430, set = 0, binding = 5) buffer Part { float part[]; };

layout(push_constant) uniform Params {
    // m and c are the output and input channels, mg and cg their number
    // per group, groups the group count.
    uint m;
    uint c;
    uint mg;
    uint cg;
    uint groups;
    // s is the output size of one image, cols the positions of all
    // images, splits the number of K splits.
    uint s;
    uint cols;
    uint splits;
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
    // per is the K steps of one split.
    uint per;
} p;

// As[kk][r / 4][r % 4] holds the weight of tile row r at depth kk of the
// step, padded to spread the stores over the banks; Bs[kk][c / 4][c % 4]
// the input of tile column c.
#ifndef COOPMAT
shared vec4 As[KS][TM / 4u + 1u];
shared vec4 Bs[KS][TN / 4u];
#endif

#include "epilogue.glsl"

#ifndef COOPMAT
void reduce() {
    uint total = p.cols * p.m;
    uint stride = gl_NumWorkGroups.x * 256u;
    for (uint e = gl_GlobalInvocationID.x; e < total; e += stride) {
        float v = 0.0;
        for (uint i = 0u; i < p.splits; i++) {
            v += part[i * total + e];
        }
        epilogue(e, (e / p.s) % p.m, v);
    }
}
#endif

// The geometry gemm and fetch share: taps per input channel (the
// kernel's, ktaps, or a phase's), the taps of one kernel plane, the depth
// K, the input's size per channel and its sizes; the taps along each axis that K walks (kdim: the kernel, or a
// phase's nt) and the input step between them (kstep: the dilation, or a
// phase's negative step), and a phase's first taps and tap steps (t0,
// tstep); the weight row this invocation stages (ar, ak to ak + 3, wok
// when it exists, wb its first weight) and, per column of the
// invocation, whether it exists, the image's input base and the window's
// first input coordinate.
uint taps, kyx, depth, isz, ktaps;
ivec3 dims;
uvec3 kdim, t0, tstep;
ivec3 kstep;
uint ar, ak, wb;
bool wok;
bool cok[4];
uint xb[4];
ivec3 i0[4];

// tapOf splits depth kk into its input channel and its taps along each
// axis (of kdim).
uint tapOf(uint kk, out uvec3 j) {
    uint ci = kk / taps;
    uint tap = kk - ci * taps;
    uint jz = tap / kyx;
    uint rest = tap - jz * kyx;
    uint jy = rest / kdim.z;
    j = uvec3(jz, jy, rest - jy * kdim.z);
    return ci;
}

// rowBase returns the index of the first weight of group g's output
// channel row: W [M, cg, k...] lies in K's order, ConvTranspose's W [C,
// mg, k...] holds a row's taps for each input channel mg · taps apart.
uint rowBase(uint g, uint row) {
    if (TRANSPOSED) {
        return (g * p.cg * p.mg + row) * ktaps;
    }
    return (g * p.mg + row) * depth;
}

// weightIndex returns the index of the weight at depth kk of the row
// whose rowBase is base: among the kernel's taps, the phase's when
// TRANSPOSED.
uint weightIndex(uint base, uint kk) {
    if (!TRANSPOSED) {
        return base + kk;
    }
    uvec3 j;
    uint ci = tapOf(kk, j);
    uvec3 t = t0 + j * tstep;
    return base + ci * p.mg * ktaps + (t.x * p.k[1] + t.y) * p.k[2] + t.z;
}

// phase sets the transposed geometry of phase ph (t0, tstep, kdim,
// kstep, taps, kyx and depth) and returns its offsets rr modulo the
// strides and the input coordinate of its first output's first tap.
ivec3 phase(uint ph, out uvec3 rr) {
    rr = uvec3(ph / (p.st[1] * p.st[2]), (ph / p.st[2]) % p.st[1], ph % p.st[2]);
    ivec3 base;
    for (int a = 0; a < 3; a++) {
        int st = int(p.st[a]), dil = int(p.dil[a]), kn = int(p.k[a]);
        int step = tapStep(dil, st);
        int b = int(rr[a]) + p.pad[a];
        int f = firstTap(b, kn, dil, st, step);
        t0[a] = uint(f);
        tstep[a] = uint(step);
        kdim[a] = f < kn ? uint((kn - f + step - 1) / step) : 0u;
        kstep[a] = -(step * dil / st);
        // b - f * dil is a multiple of st (or no tap reaches).
        int num = b - f * dil;
        base[a] = num >= 0 ? num / st : -((-num) / st);
    }
    taps = kdim.x * kdim.y * kdim.z;
    kyx = kdim.y * kdim.z;
    depth = p.cg * taps;
    return base;
}

// geometry sets the geometry of a convolution (of its phases when
// TRANSPOSED, see phase) and returns the grid of outputs a GEMM column
// walks in each image: the output, or a phase's outputs, ceil(odim /
// st) a side, of which there are phases.
uvec3 geometry(out uint phases) {
    ktaps = p.k[0] * p.k[1] * p.k[2];
    taps = ktaps;
    kyx = p.k[1] * p.k[2];
    depth = p.cg * taps;
    kdim = uvec3(p.k[0], p.k[1], p.k[2]);
    kstep = ivec3(p.dil[0], p.dil[1], p.dil[2]);
    isz = p.idim[0] * p.idim[1] * p.idim[2];
    dims = ivec3(p.idim[0], p.idim[1], p.idim[2]);
    uvec3 odim = uvec3(p.odim[0], p.odim[1], p.odim[2]);
    phases = 1u;
    if (!TRANSPOSED) {
        return odim;
    }
    uvec3 st = uvec3(p.st[0], p.st[1], p.st[2]);
    phases = st.x * st.y * st.z;
    return (odim + st - 1u) / st;
}

// column returns whether GEMM column q (of gcols, each image's grid of
// outputs in turn) is an output of group g, and sets the input base xbc
// of the group's first channel in its image, the input coordinate i0c
// of its window's first tap and the output index yc of the group's first
// channel there; rr and base are the tile's phase's (see phase).
bool column(uint q, uint gcols, uvec3 grid, uvec3 rr, ivec3 base, uint g, out uint xbc, out ivec3 i0c, out uint yc) {
    bool ok = q < gcols;
    q = min(q, gcols - 1u);
    uint gsize = grid.x * grid.y * grid.z;
    uint img = q / gsize;
    uint gp = q % gsize;
    uvec3 o = uvec3(gp / (grid.y * grid.z), (gp / grid.z) % grid.y, gp % grid.z);
    uvec3 st = uvec3(p.st[0], p.st[1], p.st[2]);
    uvec3 odim = uvec3(p.odim[0], p.odim[1], p.odim[2]);
    if (TRANSPOSED) {
        i0c = ivec3(o) + base;
        o = o * st + rr;
        ok = ok && all(lessThan(o, odim));
        o = min(o, odim - 1u);
    } else {
        i0c = ivec3(o * st) - ivec3(p.pad[0], p.pad[1], p.pad[2]);
    }
    xbc = (img * p.c + g * p.cg) * isz;
    yc = (img * p.m + g * p.mg) * p.s + (o.x * odim.y + o.y) * odim.z + o.z;
    return ok;
}

#ifndef COOPMAT

// fetch reads from global memory what this invocation stages for K step
// step: 4 weights of its row into ra, the input of its 4 columns at
// depth lid / 16 into rb (0 outside the input).
void fetch(uint step, out vec4 ra, out vec4 rb) {
    for (uint i = 0u; i < 4u; i++) {
        uint kk = step * KS + ak + i;
        ra[i] = wok && kk < depth ? float(w[weightIndex(wb, kk)]) : 0.0;
    }
    rb = vec4(0.0);
    uint kk = step * KS + gl_LocalInvocationID.x / 16u;
    if (kk >= depth) {
        return;
    }
    uint ci = kk;
    ivec3 d = ivec3(0);
    if (!POINT) {
        uvec3 j;
        ci = tapOf(kk, j);
        d = ivec3(j) * kstep;
    }
    for (uint j = 0u; j < 4u; j++) {
        ivec3 at = i0[j] + d;
        if (cok[j] && all(greaterThanEqual(at, ivec3(0))) && all(lessThan(at, dims))) {
            rb[j] = float(x[xb[j] + ci * isz + uint((at.x * dims.y + at.y) * dims.z + at.z)]);
        }
    }
}

void gemm() {
    uint lid = gl_LocalInvocationID.x;
    uint tx = lid % 16u;
    uint ty = lid / 16u;
    ar = lid / 4u;
    ak = (lid % 4u) * 4u;
    uint phases;
    uvec3 grid = geometry(phases);
    uint gcols = (p.cols / p.s) * grid.x * grid.y * grid.z;
    uint tm = (p.mg + TM - 1u) / TM;
    uint tn = (gcols + TN - 1u) / TN;
    uint inPhase = p.groups * tm * tn;
    uint tiles = phases * inPhase;
    uint total = tiles * p.splits;
    uint elems = p.cols * p.m;
    for (uint t = gl_WorkGroupID.x; t < total; t += gl_NumWorkGroups.x) {
        uint split = t / tiles;
        uint r = t % tiles;
        uvec3 rr = uvec3(0);
        ivec3 base = ivec3(0);
        if (TRANSPOSED) {
            base = phase(r / inPhase, rr);
        }
        r %= inPhase;
        uint g = r / (tm * tn);
        r %= tm * tn;
        uint m0 = (r / tn) * TM;
        uint n0 = (r % tn) * TN;
        uint steps = (depth + KS - 1u) / KS;
        uint s0 = split * p.per;
        uint s1 = min(s0 + p.per, steps);
        // yi: per column, the output index of the group's channel 0.
        uint yi[4];
        for (uint j = 0u; j < 4u; j++) {
            cok[j] = column(n0 + tx * 4u + j, gcols, grid, rr, base, g, xb[j], i0[j], yi[j]);
        }
        wok = m0 + ar < p.mg;
        wb = rowBase(g, min(m0 + ar, p.mg - 1u));
        vec4 acc[4];
        for (int i = 0; i < 4; i++) {
            acc[i] = vec4(0.0);
        }
        vec4 ra, rb;
        if (s0 < s1) {
            fetch(s0, ra, rb);
        }
        for (uint step = s0; step < s1; step++) {
            for (uint i = 0u; i < 4u; i++) {
                As[ak + i][ar / 4u][ar % 4u] = ra[i];
            }
            Bs[ty][tx] = rb;
            barrier();
            if (step + 1u < s1) {
                fetch(step + 1u, ra, rb);
            }
            for (uint kk = 0u; kk < KS; kk++) {
                vec4 a = As[kk][ty];
                vec4 b = Bs[kk][tx];
                acc[0] += a.x * b;
                acc[1] += a.y * b;
                acc[2] += a.z * b;
                acc[3] += a.w * b;
            }
            barrier();
        }
        for (uint i = 0u; i < 4u; i++) {
            uint row = m0 + ty * 4u + i;
            if (row >= p.mg) {
                continue;
            }
            for (uint j = 0u; j < 4u; j++) {
                if (!cok[j]) {
                    continue;
                }
                uint at = yi[j] + row * p.s;
                if (SPLIT) {
                    part[split * elems + at] = acc[i][j];
                } else {
                    epilogue(at, g * p.mg + row, acc[i][j]);
                }
            }
        }
    }
}
#endif

#ifdef COOPMAT
#include "matrixunits.glsl"

// w8 reads w 8 halves (16 bytes) at a time, where the depth is a
// multiple of 8 (each row's run of 8 then starts at a multiple of 8).
layout(std430, set = 0, binding = 1) readonly buffer W8 { uvec4 w8[]; };

// tapC and tapD hold, for each depth kk of the slice being fetched, the
// input offset of its channel (ci * isz) and its taps' offset from a
// window's first input coordinate, so that the gathers divide nothing
// (tapTable writes them, once a slice).
shared uint tapC[BK];
shared ivec3 tapD[BK];

// tapTable writes tapC and tapD for the slice at depth k0.
void tapTable(uint k0) {
    for (uint kk = gl_LocalInvocationID.x; kk < BK; kk += gl_WorkGroupSize.x) {
        uvec3 jj = uvec3(0u);
        uint ci = POINT ? k0 + kk : tapOf(k0 + kk, jj);
        tapC[kk] = ci * isz;
        tapD[kk] = ivec3(jj) * kstep;
    }
}

// gather returns the input at depth kk of the slice tapTable last
// described, of the column whose geometry is slot j (cok, xb, i0), 0 in
// the padding.
float16_t gather(uint kk, uint j) {
    ivec3 at = i0[j] + tapD[kk];
    if (cok[j] && all(greaterThanEqual(at, ivec3(0))) && all(lessThan(at, dims))) {
        return x[xb[j] + tapC[kk] + uint((at.x * dims.y + at.y) * dims.z + at.z)];
    }
    return float16_t(0.0);
}

// GMAX bounds the gathered halves of a slice an invocation holds
// (useMatrixUnits keeps to it).
const uint GMAX = 32u;

// ra holds an invocation's units of the next slice of the weights (fast
// ones only: 16-byte reads whole inside the matrix, see fastW), rg its
// gathered halves of the next slice of the patch, element lid + u * wg
// of the slice in rg[u].
uvec4 ra[UMAX];
float16_t rg[GMAX];

// fastW says whether unit q of the weights' slice at depth k0 (rows m0
// on, ke the end of the depth) is read 16 bytes at a time; ij is its
// first half's place (row, depth).
bool fastW(uint q, uint m0, uint k0, uint ke, out uvec2 ij) {
    ij = unitAt(q, true, BM, BK);
    return !TRANSPOSED && depth % 8u == 0u && m0 + ij.x < p.mg && k0 + ij.y + 8u <= ke;
}

// fetch reads the invocation's fast units of the weights and its halves
// of the patch, of the slice at depth k0 (which tapTable described), into
// ra and rg.
void fetch(uint m0, uint k0, uint ke, uint wrow) {
    uint lid = gl_LocalInvocationID.x;
    uint wg = gl_WorkGroupSize.x;
    uint slots = max(1u, BN / wg);
    [[unroll]] for (uint u = 0u; u < UMAX; u++) {
        uint q = lid + u * wg;
        uvec2 ij;
        if (u * wg < UNITS_A && q < UNITS_A && fastW(q, m0, k0, ke, ij)) {
            ra[u] = w8[(wrow + ij.x * depth + k0 + ij.y) / 8u];
        }
    }
    [[unroll]] for (uint u = 0u; u < GMAX; u++) {
        uint q = lid + u * wg;
        if (u * wg < BK * BN && q < BK * BN) {
            uint kk = q / BN;
            rg[u] = k0 + kk < ke ? gather(kk, wg >= BN ? 0u : u % slots) : float16_t(0.0);
        }
    }
}

// place stores the slice at depth k0 in shared memory: the fast units of
// the weights from ra, the others read now, a half at a time (a
// ConvTranspose's through weightIndex), and the patch from rg.
void place(uint g, uint m0, uint k0, uint ke, uint wrow) {
    uint lid = gl_LocalInvocationID.x;
    uint wg = gl_WorkGroupSize.x;
    [[unroll]] for (uint u = 0u; u < UMAX; u++) {
        uint q = lid + u * wg;
        uvec2 ij;
        if (u * wg < UNITS_A && q < UNITS_A && fastW(q, m0, k0, ke, ij)) {
            placeA(true, ij, ra[u]);
        }
    }
    for (uint q = lid; q < UNITS_A; q += wg) {
        uvec2 ij;
        if (fastW(q, m0, k0, ke, ij)) {
            continue;
        }
        uint row = ij.x;
        for (uint e = 0u; e < 8u; e++) {
            uint kk = ij.y + e;
            float16_t v = float16_t(0.0);
            if (m0 + row < p.mg && k0 + kk < ke) {
                v = TRANSPOSED ? w[weightIndex(rowBase(g, m0 + row), k0 + kk)] : w[wrow + row * depth + k0 + kk];
            }
            putA(row * SA + kk, v);
        }
    }
    [[unroll]] for (uint u = 0u; u < GMAX; u++) {
        uint q = lid + u * wg;
        if (u * wg < BK * BN && q < BK * BN) {
            putB((q / BN) * SB + q % BN, rg[u]);
        }
    }
}

// matrixUnits is gemm on the matrix units: per tile, each BK-deep slice
// stages the weights [BM x BK] and the gathered patch [BK x BN] in shared
// memory as fp16, read while the slice before it is multiplied, and each
// subgroup multiplies F x F fragments, summed in fp32; the store goes
// through shared memory to the epilogue, or split, to the partial sums.
// Invocation lid gathers the columns lid % BN + j * wg (j below BN / wg,
// at least 1), whose geometry it computes once a tile. A ConvTranspose's
// tiles are its phases', as gemm's, its weights read one at a time.
void matrixUnits() {
    uint lid = gl_LocalInvocationID.x;
    uint wg = gl_WorkGroupSize.x;
    uint sg = gl_SubgroupID;
    uint wm = (sg / 2u) * F * LM;
    uint wn = (sg % 2u) * F * LN;
    uint slots = max(1u, BN / wg);
    uint phases;
    uvec3 grid = geometry(phases);
    uint gcols = (p.cols / p.s) * grid.x * grid.y * grid.z;
    uint tm = (p.mg + BM - 1u) / BM;
    uint tn = (gcols + BN - 1u) / BN;
    uint inPhase = p.groups * tm * tn;
    uint tiles = phases * inPhase;
    uint total = tiles * p.splits;
    uint elems = p.cols * p.m;
    for (uint t = gl_WorkGroupID.x; t < total; t += gl_NumWorkGroups.x) {
        uint split = t / tiles;
        uint r = t % tiles;
        uvec3 rr = uvec3(0);
        ivec3 base = ivec3(0);
        if (TRANSPOSED) {
            base = phase(r / inPhase, rr);
        }
        r %= inPhase;
        uint g = r / (tm * tn);
        r %= tm * tn;
        uint m0 = (r / tn) * BM;
        uint n0 = (r % tn) * BN;
        // Split-K's steps are KS deep, as gemm's.
        uint steps = (depth + KS - 1u) / KS;
        uint kb = split * p.per * KS;
        uint ke = min(depth, min(split * p.per + p.per, steps) * KS);
        for (uint j = 0u; j < slots; j++) {
            uint yc;
            cok[j] = column(n0 + lid % BN + j * wg, gcols, grid, rr, base, g, xb[j], i0[j], yc);
        }
        clearAcc();
        uint wrow = (g * p.mg + m0) * depth;
        // The table is rewritten for each slice only once every fetch
        // of the one before has read it: behind the barrier after this
        // first fetch, then behind the barrier that ends each slice.
        tapTable(kb);
        barrier();
        if (kb < ke) {
            fetch(m0, kb, ke, wrow);
        }
        barrier();
        for (uint k0 = kb; k0 < ke; k0 += BK) {
            place(g, m0, k0, ke, wrow);
            if (k0 + BK < ke) {
                tapTable(k0 + BK);
            }
            barrier();
            if (k0 + BK < ke) {
                fetch(m0, k0 + BK, ke, wrow);
            }
            multiplySlice(wm, wn);
            barrier();
        }
        uint at0 = sg * LM * LN;
        [[unroll]] for (uint i = 0u; i < FMAX; i++) {
            [[unroll]] for (uint j = 0u; j < FMAX; j++) {
                if (i >= F || j >= F) {
                    continue;
                }
                stage(i * FMAX + j, at0);
                for (uint e = gl_SubgroupInvocationID; e < LM * LN; e += gl_SubgroupSize) {
                    uint row = m0 + wm + i * LM + e / LN;
                    uint q = n0 + wn + j * LN + e % LN;
                    // A column's output: a Conv's directly, a phase's
                    // through its grid.
                    uint xbc, yc = ((q / p.s) * p.m + g * p.mg) * p.s + q % p.s;
                    ivec3 i0c;
                    bool ok = TRANSPOSED ? column(q, gcols, grid, rr, base, g, xbc, i0c, yc) : q < p.cols;
                    if (row < p.mg && ok) {
                        uint at = yc + row * p.s;
                        if (SPLIT) {
                            part[split * elems + at] = co[at0 + e];
                        } else {
                            epilogue(at, g * p.mg + row, co[at0 + e]);
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
#ifdef COOPMAT
void main() {
    matrixUnits();
}
#else
void main() {
    if (REDUCE) {
        reduce();
    } else {
        gemm();
    }
}
#endif
