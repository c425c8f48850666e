//go:build !noasm

// Vectorised max and average pooling and the float64 sum of
// GlobalAveragePool (see pool_amd64.go). maxRowsAVX2: dst[i] = the fold over the taps t of
// src[offs[t]+i] with best = v where v > best or best is NaN, 32 outputs
// at a time, then 8, then a masked vector for the rest; then the same for
// each further row, dstPitch and srcPitch on. VMAXPS v, best (Intel order) gives v > best ? v : best, best when
// either is NaN; VBLENDVPS then takes v where best is NaN. AVX2.

#include "textflag.h"

// maxMask<>+4·(8−n) is the mask of a vector's first n lanes.
DATA maxMask<>+0(SB)/4, $0xffffffff
DATA maxMask<>+4(SB)/4, $0xffffffff
DATA maxMask<>+8(SB)/4, $0xffffffff
DATA maxMask<>+12(SB)/4, $0xffffffff
DATA maxMask<>+16(SB)/4, $0xffffffff
DATA maxMask<>+20(SB)/4, $0xffffffff
DATA maxMask<>+24(SB)/4, $0xffffffff
DATA maxMask<>+28(SB)/4, $0xffffffff
DATA maxMask<>+32(SB)/4, $0
DATA maxMask<>+36(SB)/4, $0
DATA maxMask<>+40(SB)/4, $0
DATA maxMask<>+44(SB)/4, $0
DATA maxMask<>+48(SB)/4, $0
DATA maxMask<>+52(SB)/4, $0
DATA maxMask<>+56(SB)/4, $0
DATA maxMask<>+60(SB)/4, $0
GLOBL maxMask<>(SB), RODATA|NOPTR, $64

// MAXTAP folds the vector v into best (t1, t2 scratch).
#define MAXTAP(v, best, t1, t2) \
	VMAXPS best, v, t1 \
	VCMPPS $3, best, best, t2 \
	VBLENDVPS t2, v, t1, best

// func maxRowsAVX2(dst, src *float32, offs *int, taps, n, rows, dstPitch, srcPitch int)
TEXT ·maxRowsAVX2(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ offs+16(FP), BX
	MOVQ taps+24(FP), R8
	MOVQ n+32(FP), CX
	MOVQ rows+40(FP), R11
	MOVQ dstPitch+48(FP), R12
	SHLQ $2, R12
	MOVQ srcPitch+56(FP), R13
	SHLQ $2, R13
	// R14 and DX: the row's first output and input.
	MOVQ DI, R14
	MOVQ SI, DX

wide:
	CMPQ CX, $32
	JLT narrow
	MOVQ (BX), R10
	VMOVUPS 0(SI)(R10*4), Y0
	VMOVUPS 32(SI)(R10*4), Y1
	VMOVUPS 64(SI)(R10*4), Y2
	VMOVUPS 96(SI)(R10*4), Y3
	MOVQ $1, R9

widetap:
	CMPQ R9, R8
	JGE widestore
	MOVQ (BX)(R9*8), R10
	VMOVUPS 0(SI)(R10*4), Y4
	VMOVUPS 32(SI)(R10*4), Y5
	VMOVUPS 64(SI)(R10*4), Y6
	VMOVUPS 96(SI)(R10*4), Y7
	MAXTAP(Y4, Y0, Y8, Y9)
	MAXTAP(Y5, Y1, Y10, Y11)
	MAXTAP(Y6, Y2, Y12, Y13)
	MAXTAP(Y7, Y3, Y14, Y15)
	INCQ R9
	JMP widetap

widestore:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP wide

narrow:
	CMPQ CX, $8
	JLT partial
	MOVQ (BX), R10
	VMOVUPS 0(SI)(R10*4), Y0
	MOVQ $1, R9

narrowtap:
	CMPQ R9, R8
	JGE narrowstore
	MOVQ (BX)(R9*8), R10
	VMOVUPS 0(SI)(R10*4), Y4
	MAXTAP(Y4, Y0, Y8, Y9)
	INCQ R9
	JMP narrowtap

narrowstore:
	VMOVUPS Y0, 0(DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP narrow

partial:
	TESTQ CX, CX
	JZ done
	SHLQ $2, CX
	LEAQ maxMask<>+32(SB), AX
	SUBQ CX, AX
	VMOVDQU (AX), Y15
	MOVQ (BX), R10
	VMASKMOVPS 0(SI)(R10*4), Y15, Y0
	MOVQ $1, R9

partialtap:
	CMPQ R9, R8
	JGE partialstore
	MOVQ (BX)(R9*8), R10
	VMASKMOVPS 0(SI)(R10*4), Y15, Y4
	MAXTAP(Y4, Y0, Y8, Y9)
	INCQ R9
	JMP partialtap

partialstore:
	VMASKMOVPS Y0, Y15, (DI)

done:
	DECQ R11
	JZ last
	ADDQ R12, R14
	ADDQ R13, DX
	MOVQ R14, DI
	MOVQ DX, SI
	MOVQ n+32(FP), CX
	JMP wide

last:
	VZEROUPPER
	RET

// func meanRowsAVX2(dst, src *float32, offs *int, taps, n int, d float32)
//
// dst[i] = (0 + Σₜ src[offs[t]+i]) / d, the taps added in order, 8
// outputs at a time, then a masked vector for the rest.
TEXT ·meanRowsAVX2(SB), NOSPLIT, $0-44
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ offs+16(FP), BX
	MOVQ taps+24(FP), R8
	MOVQ n+32(FP), CX
	VBROADCASTSS d+40(FP), Y14
	VXORPS Y13, Y13, Y13

meanwide:
	CMPQ CX, $8
	JLT meanpartial
	VMOVAPS Y13, Y0
	XORQ R9, R9

meanwidetap:
	MOVQ (BX)(R9*8), R10
	VADDPS 0(SI)(R10*4), Y0, Y0
	INCQ R9
	CMPQ R9, R8
	JLT meanwidetap
	VDIVPS Y14, Y0, Y0
	VMOVUPS Y0, 0(DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP meanwide

meanpartial:
	TESTQ CX, CX
	JZ meandone
	SHLQ $2, CX
	LEAQ maxMask<>+32(SB), AX
	SUBQ CX, AX
	VMOVDQU (AX), Y15
	VMOVAPS Y13, Y0
	XORQ R9, R9

meanpartialtap:
	MOVQ (BX)(R9*8), R10
	VMASKMOVPS 0(SI)(R10*4), Y15, Y4
	VADDPS Y4, Y0, Y0
	INCQ R9
	CMPQ R9, R8
	JLT meanpartialtap
	VDIVPS Y14, Y0, Y0
	VMASKMOVPS Y0, Y15, (DI)

meandone:
	VZEROUPPER
	RET

// func sumF64AVX2(x *float32, n int) float64
TEXT ·sumF64AVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3

sum16:
	CMPQ CX, $16
	JLT sum8
	VCVTPS2PD 0(SI), Y4
	VCVTPS2PD 16(SI), Y5
	VCVTPS2PD 32(SI), Y6
	VCVTPS2PD 48(SI), Y7
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y1, Y1
	VADDPD Y6, Y2, Y2
	VADDPD Y7, Y3, Y3
	ADDQ $64, SI
	SUBQ $16, CX
	JMP sum16

sum8:
	TESTQ CX, CX
	JZ sumdone
	VCVTPS2PD 0(SI), Y4
	VCVTPS2PD 16(SI), Y5
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y1, Y1

sumdone:
	VADDPD Y1, Y0, Y0
	VADDPD Y3, Y2, Y2
	VADDPD Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD X1, X0, X0
	VHADDPD X0, X0, X0
	VZEROUPPER
	MOVSD X0, ret+16(FP)
	RET
