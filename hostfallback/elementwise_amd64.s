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
