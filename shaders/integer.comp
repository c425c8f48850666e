// ConvInteger and MatMulInteger: sums of products of 8-bit integers less
// their zero points, accumulated in int32 (exact; wrapping where the CPU
// kernel's int32 sums wrap too). Operands are uint8 or int8, read as
// bytes of 32-bit words (element i is byte i % 4 of word i / 4) so that
// no 8-bit storage is needed. One invocation computes one output element.
//
// OP is MODE + 4 * (a signed) + 8 * (b signed), MODE being CONV (0) or
// MATMUL (1). a is ConvInteger's x or MatMulInteger's A, b its w or B;
// za and zb are their zero points: p.zan and p.zbn values (0: none),
// element i of za applying to a's row (MatMulInteger: index of the row
// of A counted over its batch; ConvInteger: always 0) modulo p.zan, and
// element j of zb to b's output channel (ConvInteger) or column of B
// counted over its batch (MatMulInteger) modulo p.zbn.
//
// Compiled with DOT defined (integer_dot.spv), for devices with the
// integer dot product, MATMUL_DOT (2) is MatMulInteger with K a multiple
// of 4 and B constant, packed at compile time as its columns ([matrix,
// column, k]): each word of A and of packed B holds 4 consecutive k, and
// one OpSDot, OpUDot or OpSUDot (SPV_KHR_integer_dot_product, declared
// through GL_EXT_spirv_intrinsics) sums their products. The zero points
// come off after: sum (a - za)(b - zb) = sum ab - zb sum a - za sum b +
// K za zb, exact in wrapping int32 as the CPU's sum.
//
// ConvInteger runs over one to three spatial axes (fewer axes are the
// trailing ones of three, the leading ones of size 1) with groups,
// strides, dilations and padding; padding reads as the zero point, that
// is it adds nothing. MatMulInteger is batched with numpy broadcasting
// over up to four batch axes, as matmul.comp.
#version 450

layout(local_size_x = 256) in;

layout(constant_id = 0) const int OP = 0;

const int CONV = 0;
const int MATMUL = 1;
const int MATMUL_DOT = 2;
const int MODE = OP & 3;
const bool ASIGNED = (OP & 4) != 0;
const bool BSIGNED = (OP & 8) != 0;

layout(std430, set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { uint b[]; };
layout(std430, set = 0, binding = 2) readonly buffer ZA { uint za[]; };
layout(std430, set = 0, binding = 3) readonly buffer ZB { uint zb[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Y { int y[]; };

layout(push_constant) uniform Params {
    uint total;
    uint zan;
    uint zbn;
    // CONV: batch, m, c, mg, cg, s (the output size of one image),
    // then the window (idim, odim, k, st, dil, pad; 3 each).
    // MATMUL: m, n, k, batches, rank, then dims, sa and sb (4 each): the
    // batch shape and the element strides of a's and b's matrices along
    // it.
    uint v[24];
} p;

int byteOf(uint w, uint i, bool signed) {
    int sh = int(i & 3u) * 8;
    return signed ? bitfieldExtract(int(w), sh, 8) : int(bitfieldExtract(w, sh, 8));
}

int aAt(uint i) { return byteOf(a[i >> 2], i, ASIGNED); }
int bAt(uint i) { return byteOf(b[i >> 2], i, BSIGNED); }
int zaAt(uint i) { return p.zan == 0u ? 0 : byteOf(za[(i % p.zan) >> 2], i % p.zan, ASIGNED); }
int zbAt(uint i) { return p.zbn == 0u ? 0 : byteOf(zb[(i % p.zbn) >> 2], i % p.zbn, BSIGNED); }

int conv(uint o) {
    uint m = p.v[1], c = p.v[2], mg = p.v[3], cg = p.v[4], s = p.v[5];
    uint pos = o % s;
    uint oc = (o / s) % m;
    uint img = o / (s * m);
    uint od[3];
    for (int d = 2; d >= 0; d--) {
        od[d] = pos % p.v[9 + d];
        pos /= p.v[9 + d];
    }
    int xz = zaAt(0u);
    int wz = zbAt(oc);
    uint first = (oc / mg) * cg;
    int acc = 0;
    for (uint k0 = 0u; k0 < p.v[12]; k0++) {
        int i0 = int(od[0] * p.v[15] + k0 * p.v[18]) - int(p.v[21]);
        if (i0 < 0 || i0 >= int(p.v[6])) {
            continue;
        }
        for (uint k1 = 0u; k1 < p.v[13]; k1++) {
            int i1 = int(od[1] * p.v[16] + k1 * p.v[19]) - int(p.v[22]);
            if (i1 < 0 || i1 >= int(p.v[7])) {
                continue;
            }
            for (uint k2 = 0u; k2 < p.v[14]; k2++) {
                int i2 = int(od[2] * p.v[17] + k2 * p.v[20]) - int(p.v[23]);
                if (i2 < 0 || i2 >= int(p.v[8])) {
                    continue;
                }
                uint at = (uint(i0) * p.v[7] + uint(i1)) * p.v[8] + uint(i2);
                uint tap = (k0 * p.v[13] + k1) * p.v[14] + k2;
                uint plane = p.v[6] * p.v[7] * p.v[8];
                uint taps = p.v[12] * p.v[13] * p.v[14];
                for (uint ci = 0u; ci < cg; ci++) {
                    int xv = aAt((img * c + first + ci) * plane + at) - xz;
                    int wv = bAt((oc * cg + ci) * taps + tap) - wz;
                    acc += xv * wv;
                }
            }
        }
    }
    return acc;
}

int matmul(uint o) {
    uint m = p.v[0], n = p.v[1], k = p.v[2];
    uint col = o % n;
    uint row = (o / n) % m;
    uint bi = o / (n * m);
    uint oa = 0u, ob = 0u;
    for (int d = int(p.v[4]) - 1; d >= 0; d--) {
        uint i = bi % p.v[5 + d];
        bi /= p.v[5 + d];
        oa += i * p.v[9 + d];
        ob += i * p.v[13 + d];
    }
    int az = zaAt(oa / k + row);
    int bz = zbAt(ob / k + col);
    int acc = 0;
    for (uint j = 0u; j < k; j++) {
        acc += (aAt(oa + row * k + j) - az) * (bAt(ob + j * n + col) - bz);
    }
    return acc;
}

#ifdef DOT
#extension GL_EXT_spirv_intrinsics : require

// OpSDot, OpUDot and OpSUDot on 4x8-bit packed words (capabilities
// DotProduct and DotProductInput4x8BitPacked; the literal 0 is
// PackedVectorFormat4x8Bit).
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450)
int sdot(uint a, uint b, spirv_literal int format);
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4451)
uint udot(uint a, uint b, spirv_literal int format);
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4452)
int sudot(uint a, uint b, spirv_literal int format);

// dot4 sums the products of the 4 elements of a and b.
int dot4(uint a, uint b) {
    if (ASIGNED && BSIGNED) {
        return sdot(a, b, 0);
    }
    if (!ASIGNED && !BSIGNED) {
        return int(udot(a, b, 0));
    }
    return ASIGNED ? sudot(a, b, 0) : sudot(b, a, 0);
}

// sum4 sums the 4 elements of w.
int sum4(uint w, bool signed) {
    return signed ? sdot(w, 0x01010101u, 0) : int(udot(w, 0x01010101u, 0));
}

int matmulDot(uint o) {
    uint m = p.v[0], n = p.v[1], k = p.v[2];
    uint col = o % n;
    uint row = (o / n) % m;
    uint bi = o / (n * m);
    uint oa = 0u, ob = 0u;
    for (int d = int(p.v[4]) - 1; d >= 0; d--) {
        uint i = bi % p.v[5 + d];
        bi /= p.v[5 + d];
        oa += i * p.v[9 + d];
        ob += i * p.v[13 + d];
    }
    uint kw = k / 4u;
    uint aw = (oa + row * k) / 4u;
    uint bw = (ob / k + col) * kw;
    int acc = 0, sa = 0, sb = 0;
    for (uint j = 0u; j < kw; j++) {
        uint wa = a[aw + j];
        uint wb = b[bw + j];
        acc += dot4(wa, wb);
        sa += sum4(wa, ASIGNED);
        sb += sum4(wb, BSIGNED);
    }
    int az = zaAt(oa / k + row);
    int bz = zbAt(ob / k + col);
    return acc - bz * sa - az * sb + int(k) * az * bz;
}
#endif

void main() {
    uint stride = gl_NumWorkGroups.x * 256u;
    for (uint o = gl_GlobalInvocationID.x; o < p.total; o += stride) {
#ifdef DOT
        y[o] = MODE == MATMUL_DOT ? matmulDot(o) : MODE == CONV ? conv(o) : matmul(o);
#else
        y[o] = MODE == CONV ? conv(o) : matmul(o);
#endif
    }
}
