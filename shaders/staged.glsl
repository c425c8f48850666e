// The shared memory of the matrix-unit GEMMs (matmul.comp's and
// convgemm.comp's COOPMAT variants), included after their BM, BN, BK, SA,
// SB, LM and LN: the staged slices of a [BM x BK] and b [BK x BN], rows
// SA and SB halves apart, held 4 halves an element, so that a run of 8
// read from global memory is stored in two writes and the matrix loads
// count offsets and strides in 4s (SA, SB and the fragments' offsets are
// multiples of 8); and co, one fp32 fragment per subgroup on its way out.
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
