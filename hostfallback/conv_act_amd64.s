//go:build !noasm

// Vectorised clamp, sigmoid, hard sigmoid, affine and exp of fused activations, BatchNormalization and Softmax (see
// conv_act_amd64.go and exp_amd64.go). AVX2 and FMA.
// VMAXPS and VMINPS return their second source (Intel order) when either
// is NaN: with the element there, NaN stays NaN.

#include "textflag.h"

// func clampAVX2(y *float32, n int, lo, hi float32)
TEXT ·clampAVX2(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSS lo+16(FP), Y0
	VBROADCASTSS hi+20(FP), Y1

wide:
	CMPQ CX, $32
	JLT narrow
	VMAXPS 0(DI), Y0, Y2
	VMAXPS 32(DI), Y0, Y3
	VMAXPS 64(DI), Y0, Y4
	VMAXPS 96(DI), Y0, Y5
	VMINPS Y2, Y1, Y2
	VMINPS Y3, Y1, Y3
	VMINPS Y4, Y1, Y4
	VMINPS Y5, Y1, Y5
	VMOVUPS Y2, 0(DI)
	VMOVUPS Y3, 32(DI)
	VMOVUPS Y4, 64(DI)
	VMOVUPS Y5, 96(DI)
	ADDQ $128, DI
	SUBQ $32, CX
	JMP wide

narrow:
	TESTQ CX, CX
	JZ done
	VMAXPS 0(DI), Y0, Y2
	VMINPS Y2, Y1, Y2
	VMOVUPS Y2, 0(DI)
	ADDQ $32, DI
	SUBQ $8, CX
	JMP narrow

done:
	VZEROUPPER
	RET

// Constants of sigmoidAVX2 and expShiftAVX2: the bounds of exp's argument, log₂e, ln 2 in
// two parts (Cephes' expf), exp's polynomial on [−ln2/2, ln2/2], 1 and
// the exponent bias.
DATA actConst<>+0(SB)/4, $88.3
DATA actConst<>+4(SB)/4, $-87.3
DATA actConst<>+8(SB)/4, $1.44269504088896341
DATA actConst<>+12(SB)/4, $0.693359375
DATA actConst<>+16(SB)/4, $-2.12194440e-4
DATA actConst<>+20(SB)/4, $1.9875691500e-4
DATA actConst<>+24(SB)/4, $1.3981999507e-3
DATA actConst<>+28(SB)/4, $8.3334519073e-3
DATA actConst<>+32(SB)/4, $4.1665795894e-2
DATA actConst<>+36(SB)/4, $1.6666665459e-1
DATA actConst<>+40(SB)/4, $5.0000001201e-1
DATA actConst<>+44(SB)/4, $1.0
DATA actConst<>+48(SB)/4, $127
GLOBL actConst<>(SB), RODATA|NOPTR, $52

// EXP(ROUND, x, n, r, e, t, k, le, l1, l2, one, bias) sets e to exp(x),
// x clamped already, after Cephes' expf: n = round(x·log₂e), r = x − n·ln2
// (ln2 in two parts l1, l2), exp(r) = p(r)·r² + r + 1, times 2ⁿ built in
// the exponent field (k); t is scratch. le, l1, l2, one and bias hold the
// constants EXP_CONSTS loads. ROUND is the instruction that rounds to
// nearest even, VROUNDPS for ymm and VRNDSCALEPS for zmm registers; the
// other operations are the same for both widths, lane by lane.
#define EXP(ROUND, x, n, r, e, t, k, le, l1, l2, one, bias) \
	VMULPS le, x, n \
	ROUND $0, n, n \
	VMOVAPS x, r \
	VFNMADD231PS l1, n, r \
	VFNMADD231PS l2, n, r \
	VBROADCASTSS actConst<>+20(SB), e \
	VBROADCASTSS actConst<>+24(SB), t \
	VFMADD213PS t, r, e \
	VBROADCASTSS actConst<>+28(SB), t \
	VFMADD213PS t, r, e \
	VBROADCASTSS actConst<>+32(SB), t \
	VFMADD213PS t, r, e \
	VBROADCASTSS actConst<>+36(SB), t \
	VFMADD213PS t, r, e \
	VBROADCASTSS actConst<>+40(SB), t \
	VFMADD213PS t, r, e \
	VMULPS r, r, t \
	VFMADD213PS r, t, e \
	VADDPS one, e, e \
	VCVTPS2DQ n, k \
	VPADDD bias, k, k \
	VPSLLD $23, k, k \
	VMULPS k, e, e

// EXP_CONSTS(hi, lo, le, l1, l2, one, bias) loads the bounds of exp's
// argument into hi (upper) and lo (lower), and log₂e, ln 2's two parts, 1
// and the exponent bias, which EXP reads.
#define EXP_CONSTS(hi, lo, le, l1, l2, one, bias) \
	VBROADCASTSS actConst<>+0(SB), hi \
	VBROADCASTSS actConst<>+4(SB), lo \
	VBROADCASTSS actConst<>+8(SB), le \
	VBROADCASTSS actConst<>+12(SB), l1 \
	VBROADCASTSS actConst<>+16(SB), l2 \
	VBROADCASTSS actConst<>+44(SB), one \
	VPBROADCASTD actConst<>+48(SB), bias

// EXP_Y1_Y4 sets Y4 to exp(Y1) with the constants of EXP_CONSTS_Y,
// using Y2, Y3, Y5 and Y6; EXP_Z1_Z4 is the same on zmm registers.
#define EXP_Y1_Y4 EXP(VROUNDPS, Y1, Y2, Y3, Y4, Y5, Y6, Y10, Y11, Y12, Y7, Y13)
#define EXP_Z1_Z4 EXP(VRNDSCALEPS, Z1, Z2, Z3, Z4, Z5, Z6, Z10, Z11, Z12, Z7, Z13)

// EXP_CONSTS_Y loads the bounds of exp's argument into Y8 (upper) and Y9
// (lower), and EXP's constants into Y10, Y11, Y12, Y7 and Y13;
// EXP_CONSTS_Z the same into the zmm registers.
#define EXP_CONSTS_Y EXP_CONSTS(Y8, Y9, Y10, Y11, Y12, Y7, Y13)
#define EXP_CONSTS_Z EXP_CONSTS(Z8, Z9, Z10, Z11, Z12, Z7, Z13)

// SIGMOID is the body of sigmoidAVX2 and sigmoidAVX512: y[i] = 1/(1+e)
// or, with swish, y[i]/(1+e), where e = exp(−y[i]) with the argument
// clamped to [−87.3, 88.3] (so that 2ⁿ stays a normal number); NaN stays
// NaN. CONSTS and EXPX are EXP_CONSTS and EXP for the registers' width,
// ZERO the instruction that zeroes z, v and x registers of that width,
// 2^shift lanes and bytes bytes a vector. The AVX-512 kernel does the
// AVX2 kernel's operations lane by lane.
#define SIGMOID(CONSTS, EXPX, ZERO, shift, bytes, v, x, e, z, one, lo, hi) \
	MOVQ y+0(FP), DI \
	MOVQ n+8(FP), CX \
	MOVBLZX swish+16(FP), DX \
	CONSTS \
	ZERO z, z, z \
	SHRQ $shift, CX \
sigloop: \
	VMOVUPS (DI), v \
	VSUBPS v, z, x \
	VMAXPS x, lo, x \
	VMINPS x, hi, x \
	EXPX \
	VADDPS one, e, e \
	TESTQ DX, DX \
	JZ sigmoid \
	VDIVPS e, v, v \
	JMP sigstore \
sigmoid: \
	VDIVPS e, one, v \
sigstore: \
	VMOVUPS v, (DI) \
	ADDQ $bytes, DI \
	DECQ CX \
	JNZ sigloop \
	VZEROUPPER \
	RET

// func sigmoidAVX2(y *float32, n int, swish bool)
//
// SIGMOID on 8 lanes at a time, n a positive multiple of 8.
TEXT ·sigmoidAVX2(SB), NOSPLIT, $0-17
	SIGMOID(EXP_CONSTS_Y, EXP_Y1_Y4, VXORPS, 3, 32, Y0, Y1, Y4, Y15, Y7, Y9, Y8)

// func sigmoidAVX512(y *float32, n int, swish bool)
//
// SIGMOID on 16 lanes at a time, n a positive multiple of 16.
TEXT ·sigmoidAVX512(SB), NOSPLIT, $0-17
	SIGMOID(EXP_CONSTS_Z, EXP_Z1_Z4, VPXORD, 4, 64, Z0, Z1, Z4, Z15, Z7, Z9, Z8)

// Constants of TANH: the mask of the magnitude bits, the bound between
// its two formulas, 2, and the odd polynomial of Cephes' tanhf.
DATA tanhConst<>+0(SB)/4, $0x7fffffff
DATA tanhConst<>+4(SB)/4, $0.625
DATA tanhConst<>+8(SB)/4, $2.0
DATA tanhConst<>+12(SB)/4, $-5.70498872745e-3
DATA tanhConst<>+16(SB)/4, $2.06390887954e-2
DATA tanhConst<>+20(SB)/4, $-5.37397155531e-2
DATA tanhConst<>+24(SB)/4, $1.33314422036e-1
DATA tanhConst<>+28(SB)/4, $-3.33332819422e-1
GLOBL tanhConst<>(SB), RODATA|NOPTR, $32

// TANH is the body of tanhAVX2 and tanhAVX512, tanhF32 lane by lane:
// for |x| ≥ 0.625, 1 − 2/(e + 1) with e = exp(2|x|) (the argument
// clamped above at 88.3); below, x + p(x²)·x²·x; either with x's sign
// (so that tanh(−0) = −0). Both are
// computed and SELECT(m, big, small, r) picks big where |x| ≥ 0.625 (m,
// a scratch mask register of the width), else small; NaN stays NaN (the
// polynomial's). AND, ANDN and OR are the bitwise instructions of the
// width (AVX-512F has only the integer ones for zmm). CONSTS and EXPX are EXP_CONSTS and EXP for the
// registers' width (EXP reads v1 and leaves e, clobbering t1–t4), 2^shift
// lanes and bytes bytes a vector; abs, one and hi are the registers that
// CONSTS and the mask load fills.
#define TANH(CONSTS, EXPX, SELECT, AND, ANDN, OR, shift, bytes, v, a, v1, e, t1, t2, t3, t4, abs, one, hi, m) \
	MOVQ y+0(FP), DI; \
	MOVQ n+8(FP), CX; \
	CONSTS; \
	VBROADCASTSS tanhConst<>+0(SB), abs; \
	SHRQ $shift, CX; \
tanhloop: \
	VMOVUPS (DI), v; \
	AND abs, v, a; \
	VADDPS a, a, v1; \
	VMINPS v1, hi, v1; \
	EXPX; \
	VADDPS one, e, e; \
	VBROADCASTSS tanhConst<>+8(SB), t1; \
	VDIVPS e, t1, e; \
	VSUBPS e, one, e; \
	ANDN v, abs, v1; \
	OR v1, e, e; \
	VMULPS v, v, t1; \
	VBROADCASTSS tanhConst<>+12(SB), t2; \
	VBROADCASTSS tanhConst<>+16(SB), t3; \
	VFMADD213PS t3, t1, t2; \
	VBROADCASTSS tanhConst<>+20(SB), t3; \
	VFMADD213PS t3, t1, t2; \
	VBROADCASTSS tanhConst<>+24(SB), t3; \
	VFMADD213PS t3, t1, t2; \
	VBROADCASTSS tanhConst<>+28(SB), t3; \
	VFMADD213PS t3, t1, t2; \
	VMULPS t1, t2, t2; \
	VMULPS v, t2, t2; \
	VADDPS v, t2, t2; \
	OR v1, t2, t2; \
	VBROADCASTSS tanhConst<>+4(SB), t4; \
	SELECT(m, a, t4, e, t2, v); \
	VMOVUPS v, (DI); \
	ADDQ $bytes, DI; \
	DECQ CX; \
	JNZ tanhloop; \
	VZEROUPPER; \
	RET

// SELECT_Y and SELECT_Z set r to big where a ≥ c, else to small, through
// the mask m (a vector for ymm, an opmask for zmm).
#define SELECT_Y(m, a, c, big, small, r) \
	VCMPPS $13, c, a, m; \
	VBLENDVPS m, big, small, r
#define SELECT_Z(m, a, c, big, small, r) \
	VCMPPS $13, c, a, m; \
	VBLENDMPS big, small, m, r

// func tanhAVX2(y *float32, n int)
//
// TANH on 8 lanes at a time, n a positive multiple of 8.
TEXT ·tanhAVX2(SB), NOSPLIT, $0-16
	TANH(EXP_CONSTS_Y, EXP_Y1_Y4, SELECT_Y, VANDPS, VANDNPS, VORPS, 3, 32, Y0, Y14, Y1, Y4, Y2, Y3, Y5, Y6, Y9, Y7, Y8, Y15)

// func tanhAVX512(y *float32, n int)
//
// TANH on 16 lanes at a time, n a positive multiple of 16.
TEXT ·tanhAVX512(SB), NOSPLIT, $0-16
	TANH(EXP_CONSTS_Z, EXP_Z1_Z4, SELECT_Z, VPANDD, VPANDND, VPORD, 4, 64, Z0, Z14, Z1, Z4, Z2, Z3, Z5, Z6, Z9, Z7, Z8, K1)

// func expShiftAVX2(x, y *float32, n int, m float32) float32
//
// y[i] = exp(x[i] − m) for i < n, a positive multiple of 8, with the
// argument clamped to [−87.3, 88.3] (NaN stays NaN); returns the sum of
// the y[i].
TEXT ·expShiftAVX2(SB), NOSPLIT, $0-36
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VBROADCASTSS m+24(FP), Y14
	EXP_CONSTS_Y
	VXORPS Y15, Y15, Y15
	SHRQ $3, CX

exploop:
	VMOVUPS (SI), Y1
	VSUBPS Y14, Y1, Y1
	VMAXPS Y1, Y9, Y1
	VMINPS Y1, Y8, Y1
	EXP_Y1_Y4
	VMOVUPS Y4, (DI)
	VADDPS Y4, Y15, Y15
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ exploop

	VEXTRACTF128 $1, Y15, X1
	VADDPS X1, X15, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VZEROUPPER
	MOVSS X0, ret+32(FP)
	RET

// func hardSigmoidAVX2(d, s *float32, n int, alpha, beta float32, swish bool)
TEXT ·hardSigmoidAVX2(SB), NOSPLIT, $0-33
	MOVQ d+0(FP), DI
	MOVQ s+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS alpha+24(FP), Y0
	VBROADCASTSS beta+28(FP), Y1
	MOVBLZX swish+32(FP), DX
	VXORPS Y2, Y2, Y2
	VBROADCASTSS actConst<>+44(SB), Y3
	SHRQ $3, CX

hsloop:
	VMOVUPS (SI), Y4
	VMULPS Y4, Y0, Y5
	VADDPS Y1, Y5, Y5
	VMINPS Y5, Y3, Y5
	VMAXPS Y5, Y2, Y5
	TESTQ DX, DX
	JZ hsstore
	VMULPS Y4, Y5, Y5

hsstore:
	VMOVUPS Y5, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ hsloop
	VZEROUPPER
	RET

// func affineAVX2(d, s *float32, n int, a, b float32)
TEXT ·affineAVX2(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ s+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS a+24(FP), Y0
	VBROADCASTSS b+28(FP), Y1

afwide:
	CMPQ CX, $32
	JLT afnarrow
	VMULPS 0(SI), Y0, Y2
	VMULPS 32(SI), Y0, Y3
	VMULPS 64(SI), Y0, Y4
	VMULPS 96(SI), Y0, Y5
	VADDPS Y1, Y2, Y2
	VADDPS Y1, Y3, Y3
	VADDPS Y1, Y4, Y4
	VADDPS Y1, Y5, Y5
	VMOVUPS Y2, 0(DI)
	VMOVUPS Y3, 32(DI)
	VMOVUPS Y4, 64(DI)
	VMOVUPS Y5, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP afwide

afnarrow:
	TESTQ CX, CX
	JZ afdone
	VMULPS 0(SI), Y0, Y2
	VADDPS Y1, Y2, Y2
	VMOVUPS Y2, 0(DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP afnarrow

afdone:
	VZEROUPPER
	RET

// func clampAddAVX2(y, s *float32, ld, rows, cols int, lo, hi float32)
TEXT ·clampAddAVX2(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ s+8(FP), SI
	MOVQ ld+16(FP), DX
	SHLQ $2, DX
	MOVQ rows+24(FP), R8
	MOVQ cols+32(FP), R9
	VBROADCASTSS lo+40(FP), Y0
	VBROADCASTSS hi+44(FP), Y1

clampAddRow:
	XORQ AX, AX
	MOVQ R9, CX
	TESTQ SI, SI
	JZ clampAddPlain

clampAddSum:
	VMOVUPS (DI)(AX*1), Y2
	VADDPS (SI)(AX*1), Y2, Y2
	VMAXPS Y2, Y0, Y2
	VMINPS Y2, Y1, Y2
	VMOVUPS Y2, (DI)(AX*1)
	ADDQ $32, AX
	SUBQ $8, CX
	JNZ clampAddSum
	ADDQ DX, SI
	JMP clampAddNext

clampAddPlain:
	VMAXPS (DI)(AX*1), Y0, Y2
	VMINPS Y2, Y1, Y2
	VMOVUPS Y2, (DI)(AX*1)
	ADDQ $32, AX
	SUBQ $8, CX
	JNZ clampAddPlain

clampAddNext:
	ADDQ DX, DI
	DECQ R8
	JNZ clampAddRow
	VZEROUPPER
	RET
