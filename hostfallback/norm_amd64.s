//go:build !noasm

// Vectorised squared deviations and normalisation of LayerNormalization (see
// norm_amd64.go). AVX2 and FMA.

#include "textflag.h"

// func rowSqDevAVX2(x *float32, n int, m float64) float64
//
// Four running sums over blocks of 16 (then two over one of 8): each FMA
// waits on its sum's last, and two sums left the FMA units idle.
TEXT ·rowSqDevAVX2(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSD m+16(FP), Y4
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6

rqwide:
	CMPQ CX, $16
	JLT rqnarrow
	VCVTPS2PD 0(SI), Y2
	VCVTPS2PD 16(SI), Y3
	VCVTPS2PD 32(SI), Y7
	VCVTPS2PD 48(SI), Y8
	VSUBPD Y4, Y2, Y2
	VSUBPD Y4, Y3, Y3
	VSUBPD Y4, Y7, Y7
	VSUBPD Y4, Y8, Y8
	VFMADD231PD Y2, Y2, Y0
	VFMADD231PD Y3, Y3, Y1
	VFMADD231PD Y7, Y7, Y5
	VFMADD231PD Y8, Y8, Y6
	ADDQ $64, SI
	SUBQ $16, CX
	JMP rqwide

rqnarrow:
	TESTQ CX, CX
	JZ rqsum
	VCVTPS2PD 0(SI), Y2
	VCVTPS2PD 16(SI), Y3
	VSUBPD Y4, Y2, Y2
	VSUBPD Y4, Y3, Y3
	VFMADD231PD Y2, Y2, Y0
	VFMADD231PD Y3, Y3, Y1

rqsum:
	VADDPD Y5, Y0, Y0
	VADDPD Y6, Y1, Y1
	VADDPD Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD X1, X0, X0
	VHADDPD X0, X0, X0
	VZEROUPPER
	MOVSD X0, ret+24(FP)
	RET

// func normRowAVX2(y, x, scale, bias *float32, n int, m, s float32)
// y[i] = (x[i] − m)·s·scale[i] (+ bias[i] when bias is not nil), each
// operation rounded as normRowGo's.
TEXT ·normRowAVX2(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ scale+16(FP), DX
	MOVQ bias+24(FP), R8
	MOVQ n+32(FP), CX
	SHRQ $3, CX
	VBROADCASTSS m+40(FP), Y4
	VBROADCASTSS s+44(FP), Y5
	TESTQ R8, R8
	JZ nrnobias

nrloop:
	VMOVUPS 0(SI), Y0
	VSUBPS Y4, Y0, Y0
	VMULPS Y5, Y0, Y0
	VMULPS 0(DX), Y0, Y0
	VADDPS 0(R8), Y0, Y0
	VMOVUPS Y0, 0(DI)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, DX
	ADDQ $32, R8
	DECQ CX
	JNZ nrloop
	VZEROUPPER
	RET

nrnobias:
	VMOVUPS 0(SI), Y0
	VSUBPS Y4, Y0, Y0
	VMULPS Y5, Y0, Y0
	VMULPS 0(DX), Y0, Y0
	VMOVUPS Y0, 0(DI)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, DX
	DECQ CX
	JNZ nrnobias
	VZEROUPPER
	RET
