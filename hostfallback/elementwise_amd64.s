//go:build !noasm

// Vectorised float32 Add and Mul (see elementwise_amd64.go). AVX2.

#include "textflag.h"

// func arithAVX2(d, a, b *float32, n int, mul, scalar bool)
TEXT ·arithAVX2(SB), NOSPLIT, $0-34
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	MOVBLZX mul+32(FP), R8
	MOVBLZX scalar+33(FP), R9
	VBROADCASTSS (DX), Y1
	SHRQ $3, CX

arloop:
	VMOVUPS (SI), Y0
	TESTQ R9, R9
	JNZ arop
	VMOVUPS (DX), Y1
	ADDQ $32, DX

arop:
	TESTQ R8, R8
	JNZ armul
	VADDPS Y1, Y0, Y0
	JMP arstore

armul:
	VMULPS Y1, Y0, Y0

arstore:
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ arloop
	VZEROUPPER
	RET

// func arithRowsAVX2(d, a, s *float32, rows, n int, mul bool, mask *int32)
//
// For each of rows rows of n ≥ 1 values: d = a + s[r] (mul false) or
// a·s[r] (mul true), the last n mod 8 values of a row through the lanes
// of the eight int32 at mask.
TEXT ·arithRowsAVX2(SB), NOSPLIT, $0-56
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ s+16(FP), DX
	MOVQ rows+24(FP), BX
	MOVQ n+32(FP), R10
	MOVBLZX mul+40(FP), R8
	MOVQ mask+48(FP), AX
	VMOVDQU (AX), Y7
	MOVQ R10, R11
	ANDQ $7, R11
	SHRQ $3, R10

rrow:
	VBROADCASTSS (DX), Y1
	MOVQ R10, CX
	TESTQ CX, CX
	JZ rtail

rvec:
	VMOVUPS (SI), Y0
	TESTQ R8, R8
	JNZ rvmul
	VADDPS Y1, Y0, Y0
	JMP rvstore

rvmul:
	VMULPS Y1, Y0, Y0

rvstore:
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ rvec

rtail:
	TESTQ R11, R11
	JZ rnext
	VMASKMOVPS (SI), Y7, Y0
	TESTQ R8, R8
	JNZ rtmul
	VADDPS Y1, Y0, Y0
	JMP rtstore

rtmul:
	VMULPS Y1, Y0, Y0

rtstore:
	VMASKMOVPS Y0, Y7, (DI)
	LEAQ (SI)(R11*4), SI
	LEAQ (DI)(R11*4), DI

rnext:
	ADDQ $4, DX
	DECQ BX
	JNZ rrow
	VZEROUPPER
	RET
