//go:build !noasm

// The GEMV kernel (see gemv_amd64.go): for each block of 16 columns of C,
// eight ymm accumulators, two per k-step of an unrolling by four, summed
// and added to C at the end of the block.

#include "textflag.h"

// func gemvAVX2(k int, a, b *float32, ldb int, c *float32, blocks int)
TEXT ·gemvAVX2(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), R9
	MOVQ a+8(FP), R10
	MOVQ b+16(FP), DI
	MOVQ ldb+24(FP), R8
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R12
	MOVQ c+32(FP), DX
	MOVQ blocks+40(FP), BX

gemvblock:
	MOVQ R10, SI
	MOVQ DI, R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ R9, CX
	SHRQ $2, CX
	JZ gemvtail

gemvquad:
	VBROADCASTSS 0(SI), Y8
	VBROADCASTSS 4(SI), Y9
	VBROADCASTSS 8(SI), Y10
	VBROADCASTSS 12(SI), Y11
	VFMADD231PS 0(R11), Y8, Y0
	VFMADD231PS 32(R11), Y8, Y1
	VFMADD231PS 0(R11)(R8*1), Y9, Y2
	VFMADD231PS 32(R11)(R8*1), Y9, Y3
	VFMADD231PS 0(R11)(R8*2), Y10, Y4
	VFMADD231PS 32(R11)(R8*2), Y10, Y5
	VFMADD231PS 0(R11)(R12*1), Y11, Y6
	VFMADD231PS 32(R11)(R12*1), Y11, Y7
	LEAQ (R11)(R8*4), R11
	ADDQ $16, SI
	DECQ CX
	JNZ gemvquad

gemvtail:
	MOVQ R9, CX
	ANDQ $3, CX
	JZ gemvstore

gemvone:
	VBROADCASTSS 0(SI), Y8
	VFMADD231PS 0(R11), Y8, Y0
	VFMADD231PS 32(R11), Y8, Y1
	ADDQ R8, R11
	ADDQ $4, SI
	DECQ CX
	JNZ gemvone

gemvstore:
	VADDPS Y2, Y0, Y0
	VADDPS Y3, Y1, Y1
	VADDPS Y6, Y4, Y4
	VADDPS Y7, Y5, Y5
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS 0(DX), Y0, Y0
	VADDPS 32(DX), Y1, Y1
	VMOVUPS Y0, 0(DX)
	VMOVUPS Y1, 32(DX)
	ADDQ $64, DI
	ADDQ $64, DX
	DECQ BX
	JNZ gemvblock
	VZEROUPPER
	RET
