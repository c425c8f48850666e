//go:build !noasm

// The largest element of a row, for Softmax and the fused attention (see
// rowmax_amd64.go). AVX2.

#include "textflag.h"

// func rowMaxAVX2(x *float32, n int) float32
//
// Two running maxima of 8 lanes over blocks of 16 (then one of 8), and
// the lanes that are NaN ORed into Y2: VMAXPS alone drops a NaN in one
// of its operands.
TEXT ·rowMaxAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VMOVUPS (SI), Y0
	VMOVAPS Y0, Y1
	VCMPPS $3, Y0, Y0, Y2
	ADDQ $32, SI
	SUBQ $8, CX

rmwide:
	CMPQ CX, $16
	JLT rmnarrow
	VMOVUPS (SI), Y3
	VMOVUPS 32(SI), Y4
	VMAXPS Y3, Y0, Y0
	VMAXPS Y4, Y1, Y1
	VCMPPS $3, Y3, Y4, Y5
	VORPS Y5, Y2, Y2
	ADDQ $64, SI
	SUBQ $16, CX
	JMP rmwide

rmnarrow:
	TESTQ CX, CX
	JZ rmfold
	VMOVUPS (SI), Y3
	VMAXPS Y3, Y0, Y0
	VCMPPS $3, Y3, Y3, Y5
	VORPS Y5, Y2, Y2

rmfold:
	VMAXPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4e, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xb1, X0, X1
	VMAXPS X1, X0, X0
	VMOVMSKPS Y2, AX
	TESTL AX, AX
	JZ rmdone
	// A NaN: return the quiet NaN.
	MOVL $0x7fc00000, AX
	MOVL AX, X0

rmdone:
	VZEROUPPER
	MOVSS X0, ret+16(FP)
	RET
