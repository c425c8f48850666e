// The matrix-unit GEMM shared by matmul.comp's and convgemm.comp's
// COOPMAT variants (VK_KHR_cooperative_matrix), included after their
// buffers: the unit's shape, the tiles, the staged slices in shared
// memory and the step that multiplies one slice.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require

// The matrix unit's shape: a's fragments are LM x LK, b's LK x LN.
layout(constant_id = 2) const uint LM = 16;
layout(constant_id = 3) const uint LN = 16;
layout(constant_id = 4) const uint LK = 16;
// A workgroup is four subgroups, a 2 x 2 grid, each computing F x F
// fragments (specialization constant 5: 2, or 4 for large GEMMs on
// devices with the shared memory): its tile is BM rows (output channels)
// by BN columns (positions), from BK-deep slices of a and b staged in
// shared memory; rows of the staged slices are padded by PAD elements
// (16 bytes, the alignment matrix loads want), which also spreads the
// rows over the memory banks.
layout(constant_id = 5) const uint F = 2;
// FMAX bounds F. Every loop over fragments runs to FMAX, unrolled, and
// skips those past F, so that the fragments are indexed by constants:
// spirv-opt then holds them as values, not an array that loops to F
// would index at run time and a driver could keep in memory.
const uint FMAX = 4;
const uint BM = 2 * F * LM;
const uint BN = 2 * F * LN;
const uint BK = 2 * LK;
const uint PAD = 8;
const uint SA = BK + PAD;
const uint SB = BN + PAD;

#define ACC coopmat<float, gl_ScopeSubgroup, LM, LN, gl_MatrixUseAccumulator>

// The staged slices of a [BM x BK] and b [BK x BN], rows SA and SB halves
// apart, held 4 halves an element, so that a run of 8 read from global
// memory is stored in two writes and the matrix loads count offsets and
// strides in 4s (SA, SB and the fragments' offsets are multiples of 8);
// and co, one fp32 fragment per subgroup on its way out.
shared f16vec4 ca[BM * SA / 4];
shared f16vec4 cb[BK * SB / 4];
shared float co[4 * LM * LN];

// putA and putB store one half at index at of the staged a or b.
void putA(uint at, float16_t v) {
    ca[at / 4u][at % 4u] = v;
}

void putB(uint at, float16_t v) {
    cb[at / 4u][at % 4u] = v;
}

// putA8 and putB8 store the 8 halves of v, in memory order, from index at
// (a multiple of 8) of the staged a or b.
void putA8(uint at, uvec4 v) {
    ca[at / 4u] = f16vec4(unpackFloat2x16(v.x), unpackFloat2x16(v.y));
    ca[at / 4u + 1u] = f16vec4(unpackFloat2x16(v.z), unpackFloat2x16(v.w));
}

void putB8(uint at, uvec4 v) {
    cb[at / 4u] = f16vec4(unpackFloat2x16(v.x), unpackFloat2x16(v.y));
    cb[at / 4u + 1u] = f16vec4(unpackFloat2x16(v.z), unpackFloat2x16(v.w));
}

// Each slice is read into registers while the one before it is multiplied
// (its global reads in flight during the products) and stored in shared
// memory after: a's and b's slices as units of 8 halves along one axis,
// UNITS_A and UNITS_B of them, unit q of each taken by invocation q %
// wg; an invocation holds at most UMAX units of each (useMatrixUnits
// keeps to it). unitAt returns the row and column of unit q's first half
// in a TI x TJ slice whose units run along its columns (alongJ) or down
// its rows.
const uint UMAX = 8u;
const uint UNITS_A = BM * BK / 8u;
const uint UNITS_B = BK * BN / 8u;

uvec2 unitAt(uint q, bool alongJ, uint TI, uint TJ) {
    if (alongJ) {
        return uvec2(q / (TJ / 8u), (q % (TJ / 8u)) * 8u);
    }
    return uvec2((q % (TI / 8u)) * 8u, q / (TI / 8u));
}

// placeA and placeB store unit v of a's or b's slice whose first half is
// at row i and column j: along the row or down the column.
void placeA(bool alongJ, uvec2 ij, uvec4 v) {
    if (alongJ) {
        putA8(ij.x * SA + ij.y, v);
        return;
    }
    [[unroll]] for (uint e = 0u; e < 8u; e++) {
        putA((ij.x + e) * SA + ij.y, unpackFloat2x16(v[e / 2u])[e % 2u]);
    }
}

void placeB(bool alongJ, uvec2 ij, uvec4 v) {
    if (alongJ) {
        putB8(ij.x * SB + ij.y, v);
        return;
    }
    [[unroll]] for (uint e = 0u; e < 8u; e++) {
        putB((ij.x + e) * SB + ij.y, unpackFloat2x16(v[e / 2u])[e % 2u]);
    }
}

// acc holds the subgroup's F x F fragments of the tile, in fp32, fragment
// (i, j) at i * FMAX + j: a global rather than a parameter, as Mesa's
// SPIR-V reader rejects an array of cooperative matrices passed to a
// function.
ACC acc[FMAX * FMAX];

// clearAcc sets every fragment of acc to 0.
void clearAcc() {
    [[unroll]] for (uint i = 0u; i < FMAX; i++) {
        [[unroll]] for (uint j = 0u; j < FMAX; j++) {
            if (i < F && j < F) {
                acc[i * FMAX + j] = ACC(0.0);
            }
        }
    }
}

// multiplySlice adds to acc the products of the staged slice for the
// subgroup whose fragments start at row wm and column wn of the tile.
void multiplySlice(uint wm, uint wn) {
    [[unroll]] for (uint ks = 0u; ks < BK; ks += LK) {
        coopmat<float16_t, gl_ScopeSubgroup, LM, LK, gl_MatrixUseA> fa[FMAX];
        coopmat<float16_t, gl_ScopeSubgroup, LK, LN, gl_MatrixUseB> fb[FMAX];
        [[unroll]] for (uint i = 0u; i < FMAX; i++) {
            if (i < F) {
                coopMatLoad(fa[i], ca, ((wm + i * LM) * SA + ks) / 4u, SA / 4u, gl_CooperativeMatrixLayoutRowMajor);
                coopMatLoad(fb[i], cb, (ks * SB + wn + i * LN) / 4u, SB / 4u, gl_CooperativeMatrixLayoutRowMajor);
            }
        }
        [[unroll]] for (uint i = 0u; i < FMAX; i++) {
            [[unroll]] for (uint j = 0u; j < FMAX; j++) {
                if (i < F && j < F) {
                    acc[i * FMAX + j] = coopMatMulAdd(fa[i], fb[j], acc[i * FMAX + j]);
                }
            }
        }
    }
}

// stage writes fragment f of acc to co at the subgroup's offset at,
// where every invocation of the subgroup can read it. It picks the
// fragment by constant indices (the callers' loops, which hold a loop over
// the fragment's elements, are not unrolled before the driver's compiler).
void stage(uint f, uint at) {
    [[unroll]] for (uint c = 0u; c < FMAX * FMAX; c++) {
        if (c == f) {
            coopMatStore(acc[c], co, at, LN, gl_CooperativeMatrixLayoutRowMajor);
        }
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
}
