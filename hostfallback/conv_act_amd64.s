// Vectorised clamp of fused activations (see conv_act_amd64.go). AVX2.
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

// Constants of sigmoidAVX2: the bounds of exp's argument, log₂e, ln 2 in
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

// func sigmoidAVX2(y *float32, n int, swish bool)
//
// y[i] = 1/(1+e) or, with swish, y[i]/(1+e), where e = exp(−y[i]) with
// the argument clamped to [−87.3, 88.3] (so that 2ⁿ stays a normal
// number); NaN stays NaN.
TEXT ·sigmoidAVX2(SB), NOSPLIT, $0-17
	MOVQ y+0(FP), DI
	MOVQ n+8(FP), CX
	MOVBLZX swish+16(FP), DX
	VBROADCASTSS actConst<>+0(SB), Y8
	VBROADCASTSS actConst<>+4(SB), Y9
	VBROADCASTSS actConst<>+8(SB), Y10
	VBROADCASTSS actConst<>+12(SB), Y11
	VBROADCASTSS actConst<>+16(SB), Y12
	VBROADCASTSS actConst<>+44(SB), Y7
	VPBROADCASTD actConst<>+48(SB), Y13
	VXORPS Y15, Y15, Y15
	SHRQ $3, CX

sigloop:
	VMOVUPS (DI), Y0
	VSUBPS Y0, Y15, Y1
	VMAXPS Y1, Y9, Y1
	VMINPS Y1, Y8, Y1
	// n = round(t·log₂e), r = t − n·ln2.
	VMULPS Y10, Y1, Y2
	VROUNDPS $0, Y2, Y2
	VMOVAPS Y1, Y3
	VFNMADD231PS Y11, Y2, Y3
	VFNMADD231PS Y12, Y2, Y3
	// exp(r) = p(r)·r² + r + 1.
	VBROADCASTSS actConst<>+20(SB), Y4
	VBROADCASTSS actConst<>+24(SB), Y5
	VFMADD213PS Y5, Y3, Y4
	VBROADCASTSS actConst<>+28(SB), Y5
	VFMADD213PS Y5, Y3, Y4
	VBROADCASTSS actConst<>+32(SB), Y5
	VFMADD213PS Y5, Y3, Y4
	VBROADCASTSS actConst<>+36(SB), Y5
	VFMADD213PS Y5, Y3, Y4
	VBROADCASTSS actConst<>+40(SB), Y5
	VFMADD213PS Y5, Y3, Y4
	VMULPS Y3, Y3, Y5
	VFMADD213PS Y3, Y5, Y4
	VADDPS Y7, Y4, Y4
	// Times 2ⁿ, built in the exponent field; then 1 + e.
	VCVTPS2DQ Y2, Y6
	VPADDD Y13, Y6, Y6
	VPSLLD $23, Y6, Y6
	VMULPS Y6, Y4, Y4
	VADDPS Y7, Y4, Y4
	TESTQ DX, DX
	JZ sigmoid
	VDIVPS Y4, Y0, Y0
	JMP sigstore

sigmoid:
	VDIVPS Y4, Y7, Y0

sigstore:
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	DECQ CX
	JNZ sigloop
	VZEROUPPER
	RET
