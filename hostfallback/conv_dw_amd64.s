//go:build !noasm

// Vectorised depthwise convolution (see conv_dw_amd64.go). dwRowsAVX2:
// dst[r·ow+i] = clamp(bias + Σₜ w[t]·src[offs[t]+r·wq+i], lo, hi) for
// each row r, 32 outputs at a time, then 8, then a masked vector for the
// rest of the row. AVX2 and FMA. VMAXPS and VMINPS return their second
// source (Intel order) when either is NaN: with the sum there, NaN stays
// NaN.

#include "textflag.h"

// dwMask<>+4·(8−n) is the mask of a vector's first n lanes.
DATA dwMask<>+0(SB)/4, $0xffffffff
DATA dwMask<>+4(SB)/4, $0xffffffff
DATA dwMask<>+8(SB)/4, $0xffffffff
DATA dwMask<>+12(SB)/4, $0xffffffff
DATA dwMask<>+16(SB)/4, $0xffffffff
DATA dwMask<>+20(SB)/4, $0xffffffff
DATA dwMask<>+24(SB)/4, $0xffffffff
DATA dwMask<>+28(SB)/4, $0xffffffff
DATA dwMask<>+32(SB)/4, $0
DATA dwMask<>+36(SB)/4, $0
DATA dwMask<>+40(SB)/4, $0
DATA dwMask<>+44(SB)/4, $0
DATA dwMask<>+48(SB)/4, $0
DATA dwMask<>+52(SB)/4, $0
DATA dwMask<>+56(SB)/4, $0
DATA dwMask<>+60(SB)/4, $0
GLOBL dwMask<>(SB), RODATA|NOPTR, $64

// func dwRowsAVX2(dst, src *float32, offs *int, w *float32, taps, rows, ow, wq int, bias, lo, hi float32)
TEXT ·dwRowsAVX2(SB), NOSPLIT, $0-76
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ offs+16(FP), BX
	MOVQ w+24(FP), DX
	MOVQ taps+32(FP), R8
	MOVQ rows+40(FP), R11
	MOVQ ow+48(FP), R12
	MOVQ wq+56(FP), R13
	SHLQ $2, R13
	VBROADCASTSS bias+64(FP), Y12
	VBROADCASTSS lo+68(FP), Y13
	VBROADCASTSS hi+72(FP), Y14

row:
	MOVQ R12, CX
	MOVQ SI, AX

wide:
	CMPQ CX, $32
	JLT narrow
	VMOVAPS Y12, Y0
	VMOVAPS Y12, Y1
	VMOVAPS Y12, Y2
	VMOVAPS Y12, Y3
	XORQ R9, R9

widetap:
	MOVQ (BX)(R9*8), R10
	VBROADCASTSS (DX)(R9*4), Y4
	VFMADD231PS 0(AX)(R10*4), Y4, Y0
	VFMADD231PS 32(AX)(R10*4), Y4, Y1
	VFMADD231PS 64(AX)(R10*4), Y4, Y2
	VFMADD231PS 96(AX)(R10*4), Y4, Y3
	INCQ R9
	CMPQ R9, R8
	JLT widetap
	VMAXPS Y0, Y13, Y0
	VMAXPS Y1, Y13, Y1
	VMAXPS Y2, Y13, Y2
	VMAXPS Y3, Y13, Y3
	VMINPS Y0, Y14, Y0
	VMINPS Y1, Y14, Y1
	VMINPS Y2, Y14, Y2
	VMINPS Y3, Y14, Y3
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, AX
	ADDQ $128, DI
	SUBQ $32, CX
	JMP wide

narrow:
	TESTQ CX, CX
	JZ nextrow
	VMOVAPS Y12, Y0
	XORQ R9, R9

narrowtap:
	MOVQ (BX)(R9*8), R10
	VBROADCASTSS (DX)(R9*4), Y4
	VFMADD231PS 0(AX)(R10*4), Y4, Y0
	INCQ R9
	CMPQ R9, R8
	JLT narrowtap
	VMAXPS Y0, Y13, Y0
	VMINPS Y0, Y14, Y0
	CMPQ CX, $8
	JLT partial
	VMOVUPS Y0, 0(DI)
	ADDQ $32, AX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP narrow

partial:
	SHLQ $2, CX
	LEAQ dwMask<>+32(SB), R10
	SUBQ CX, R10
	VMOVDQU (R10), Y5
	VMASKMOVPS Y0, Y5, (DI)
	ADDQ CX, DI

nextrow:
	ADDQ R13, SI
	DECQ R11
	JNZ row
	VZEROUPPER
	RET

// func dwSplit2AVX2(even, odd, x *float32, n int)
TEXT ·dwSplit2AVX2(SB), NOSPLIT, $0-32
	MOVQ even+0(FP), DI
	MOVQ odd+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX
	SHRQ $3, CX

split:
	VMOVUPS 0(SI), Y0
	VMOVUPS 32(SI), Y1
	// Within each 128-bit lane: the even (0x88) or odd (0xdd) elements
	// of the first source, then of the second; VPERMPD 0xd8 then puts
	// the four pairs in order.
	VSHUFPS $0x88, Y1, Y0, Y2
	VSHUFPS $0xdd, Y1, Y0, Y3
	VPERMPD $0xd8, Y2, Y2
	VPERMPD $0xd8, Y3, Y3
	VMOVUPS Y2, 0(DI)
	VMOVUPS Y3, 0(DX)
	ADDQ $64, SI
	ADDQ $32, DI
	ADDQ $32, DX
	DECQ CX
	JNZ split
	VZEROUPPER
	RET
