//go:build !noasm

// Vectorised depthwise convolution (see conv_dw_amd64.go). dwRowsAVX2:
// dst[r·ow+i] = clamp(bias + Σₜ w[t]·src[offs[t]+r·wq+i], lo, hi). Rows
// of up to 8 outputs go eight at a time, one masked vector each (see n8);
// other rows under 64 outputs go four at a time, 16 outputs of each at once
// (9 to 15 left also go as 16, the second vectors stored masked), then 8,
// then a masked vector for the rest of the rows: eight or four sums in
// flight, where a row alone of a narrow plane (7 or 14 outputs) would
// wait on one sum's chain of FMAs; one to three rows left over go as the
// last four rows (some computed twice). Wider rows, and calls of under
// four rows, go one at a time, 32 outputs at once, then 8, then a masked
// vector. AVX2 and FMA. VMAXPS and VMINPS return their second
// source (Intel order) when either is NaN: with the sum there, NaN stays
// NaN.

#include "textflag.h"

// DWCLAMP clamps the sums in r to [lo, hi] (Y13, Y14), NaN kept.
#define DWCLAMP(r) VMAXPS r, Y13, r; VMINPS r, Y14, r
#define DWCLAMP4(a, b, c, d) DWCLAMP(a); DWCLAMP(b); DWCLAMP(c); DWCLAMP(d)

// DWBIAS4 starts four sums at the bias (Y12).
#define DWBIAS4(a, b, c, d) VMOVAPS Y12, a; VMOVAPS Y12, b; VMOVAPS Y12, c; VMOVAPS Y12, d

// DWTAP loads tap R9's weight into Y4 and the address of its first input
// in the row at AX into R10.
#define DWTAP MOVQ (BX)(R9*8), R10; VBROADCASTSS (DX)(R9*4), Y4; LEAQ (AX)(R10*4), R10

// DWNEXT ends a group of rows at exit once n rows of it are stored (R11
// the rows left), and moves AX on to its next row otherwise.
#define DWNEXT(n, exit) CMPQ R11, $n; JEQ exit; ADDQ R12, AX

// ZMASKS loads the four masks of dwRowsAVX512 into K1–K4, through r.
#define ZMASKS(r) MOVQ masks+80(FP), r; KMOVW r, K1; SHRQ $16, r; KMOVW r, K2; SHRQ $16, r; KMOVW r, K3; SHRQ $16, r; KMOVW r, K4

// DWSPLIT sets Y2 to the even elements of Y0:Y1 and Y3 to the odd ones:
// within each 128-bit lane the even (0x88) or odd (0xdd) elements of the
// first source, then of the second; VPERMPD 0xd8 then puts the four pairs
// in order.
#define DWSPLIT VSHUFPS $0x88, Y1, Y0, Y2; VSHUFPS $0xdd, Y1, Y0, Y3; VPERMPD $0xd8, Y2, Y2; VPERMPD $0xd8, Y3, Y3

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
	LEAQ (R13)(R13*2), R14
	// Rows of up to 8 outputs go eight at a time.
	CMPQ R12, $8
	JLE n8
	// Rows of 64 outputs or more keep four sums in flight alone.
	CMPQ R12, $64
	JGE rest

group:
	CMPQ R11, $4
	JGE gbody
	TESTQ R11, R11
	JZ done
	MOVQ rows+40(FP), R9
	CMPQ R9, $4
	JLT rest
	// One to three rows left of four or more: the group of the last
	// four, whose first rows are written again with the same values.
	MOVQ $4, R9
	SUBQ R11, R9
	MOVQ R9, R10
	IMULQ R13, R9
	SUBQ R9, SI
	IMULQ R12, R10
	SHLQ $2, R10
	SUBQ R10, DI
	MOVQ $4, R11

gbody:
	MOVQ R12, CX
	MOVQ SI, AX

g16:
	// 9 to 15 outputs left go as 16, the second vectors stored masked
	// (g16part).
	CMPQ CX, $8
	JLE g8
	DWBIAS4(Y0, Y1, Y2, Y3)
	DWBIAS4(Y5, Y6, Y7, Y8)
	XORQ R9, R9

g16tap:
	DWTAP
	VFMADD231PS (R10), Y4, Y0
	VFMADD231PS 32(R10), Y4, Y5
	VFMADD231PS (R10)(R13*1), Y4, Y1
	VFMADD231PS 32(R10)(R13*1), Y4, Y6
	VFMADD231PS (R10)(R13*2), Y4, Y2
	VFMADD231PS 32(R10)(R13*2), Y4, Y7
	VFMADD231PS (R10)(R14*1), Y4, Y3
	VFMADD231PS 32(R10)(R14*1), Y4, Y8
	INCQ R9
	CMPQ R9, R8
	JLT g16tap
	DWCLAMP4(Y0, Y1, Y2, Y3)
	DWCLAMP4(Y5, Y6, Y7, Y8)
	LEAQ (DI)(R12*8), R10
	CMPQ CX, $16
	JLT g16part
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y5, 32(DI)
	VMOVUPS Y1, 0(DI)(R12*4)
	VMOVUPS Y6, 32(DI)(R12*4)
	VMOVUPS Y2, 0(R10)
	VMOVUPS Y7, 32(R10)
	VMOVUPS Y3, 0(R10)(R12*4)
	VMOVUPS Y8, 32(R10)(R12*4)
	ADDQ $64, AX
	ADDQ $64, DI
	SUBQ $16, CX
	JMP g16

g16part:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 0(DI)(R12*4)
	VMOVUPS Y2, 0(R10)
	VMOVUPS Y3, 0(R10)(R12*4)
	SUBQ $8, CX
	SHLQ $2, CX
	MOVQ R10, R9
	LEAQ dwMask<>+32(SB), R10
	SUBQ CX, R10
	VMOVDQU (R10), Y9
	VMASKMOVPS Y5, Y9, 32(DI)
	VMASKMOVPS Y6, Y9, 32(DI)(R12*4)
	VMASKMOVPS Y7, Y9, 32(R9)
	VMASKMOVPS Y8, Y9, 32(R9)(R12*4)
	LEAQ 32(DI)(CX*1), DI
	JMP gnext

g8:
	TESTQ CX, CX
	JZ gnext
	DWBIAS4(Y0, Y1, Y2, Y3)
	XORQ R9, R9

g8tap:
	DWTAP
	VFMADD231PS (R10), Y4, Y0
	VFMADD231PS (R10)(R13*1), Y4, Y1
	VFMADD231PS (R10)(R13*2), Y4, Y2
	VFMADD231PS (R10)(R14*1), Y4, Y3
	INCQ R9
	CMPQ R9, R8
	JLT g8tap
	DWCLAMP4(Y0, Y1, Y2, Y3)
	LEAQ (DI)(R12*8), R10
	CMPQ CX, $8
	JLT gpartial
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 0(DI)(R12*4)
	VMOVUPS Y2, 0(R10)
	VMOVUPS Y3, 0(R10)(R12*4)
	ADDQ $32, AX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP g8

gpartial:
	SHLQ $2, CX
	MOVQ R10, R9
	LEAQ dwMask<>+32(SB), R10
	SUBQ CX, R10
	VMOVDQU (R10), Y5
	VMASKMOVPS Y0, Y5, (DI)
	VMASKMOVPS Y1, Y5, (DI)(R12*4)
	VMASKMOVPS Y2, Y5, (R9)
	VMASKMOVPS Y3, Y5, (R9)(R12*4)
	ADDQ CX, DI

gnext:
	// DI is one row on from the group's first; three more.
	LEAQ (DI)(R12*8), DI
	LEAQ (DI)(R12*4), DI
	LEAQ (SI)(R13*4), SI
	SUBQ $4, R11
	JMP group

rest:
	TESTQ R11, R11
	JZ done

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
	DWCLAMP4(Y0, Y1, Y2, Y3)
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
	DWCLAMP(Y0)
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

done:
	VZEROUPPER
	RET

	// Rows of up to 8 outputs: eight rows of one vector, Y0–Y3 and
	// Y5–Y8, stored with the mask of ow lanes (Y9); rows past the last
	// are computed from the rows after it (within src, as the caller
	// ensures) and not stored.
n8:
	SHLQ $2, R12
	LEAQ dwMask<>+32(SB), R10
	SUBQ R12, R10
	VMOVDQU (R10), Y9

n8group:
	DWBIAS4(Y0, Y1, Y2, Y3)
	DWBIAS4(Y5, Y6, Y7, Y8)
	MOVQ SI, AX
	XORQ R9, R9

n8tap:
	DWTAP
	VFMADD231PS (R10), Y4, Y0
	VFMADD231PS (R10)(R13*1), Y4, Y1
	VFMADD231PS (R10)(R13*2), Y4, Y2
	VFMADD231PS (R10)(R14*1), Y4, Y3
	LEAQ (R10)(R13*4), R10
	VFMADD231PS (R10), Y4, Y5
	VFMADD231PS (R10)(R13*1), Y4, Y6
	VFMADD231PS (R10)(R13*2), Y4, Y7
	VFMADD231PS (R10)(R14*1), Y4, Y8
	INCQ R9
	CMPQ R9, R8
	JLT n8tap
	DWCLAMP4(Y0, Y1, Y2, Y3)
	DWCLAMP4(Y5, Y6, Y7, Y8)
	MOVQ DI, AX
	VMASKMOVPS Y0, Y9, (AX)
	DWNEXT(1, done)
	VMASKMOVPS Y1, Y9, (AX)
	DWNEXT(2, done)
	VMASKMOVPS Y2, Y9, (AX)
	DWNEXT(3, done)
	VMASKMOVPS Y3, Y9, (AX)
	DWNEXT(4, done)
	VMASKMOVPS Y5, Y9, (AX)
	DWNEXT(5, done)
	VMASKMOVPS Y6, Y9, (AX)
	DWNEXT(6, done)
	VMASKMOVPS Y7, Y9, (AX)
	DWNEXT(7, done)
	VMASKMOVPS Y8, Y9, (AX)
	LEAQ (SI)(R13*8), SI
	LEAQ (DI)(R12*8), DI
	SUBQ $8, R11
	JG n8group
	JMP done

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
	DWSPLIT
	VMOVUPS Y2, 0(DI)
	VMOVUPS Y3, 0(DX)
	ADDQ $64, SI
	ADDQ $32, DI
	ADDQ $32, DX
	DECQ CX
	JNZ split
	VZEROUPPER
	RET

// dwRowsAVX512 is dwRowsAVX2 on 16 lanes, eight sums in flight: rows of
// up to 16 outputs go eight at a time, one vector each; of up to 32, four
// at a time, two vectors each; wider ones two at a time in chunks of 64
// columns, four vectors each. The last vector of a row (or the last
// chunk's four) takes the lanes of masks (four 16-bit masks, from
// dwMasks), in its loads too; rows past the last of a group are computed
// from the rows after it (within src, as the caller ensures) and not
// stored. AVX-512F.

// ZCLAMP clamps the sums in r to [lo, hi] (Z13, Z14), NaN kept.
#define ZCLAMP(r) VMAXPS r, Z13, r; VMINPS r, Z14, r
#define ZCLAMP8 ZCLAMP(Z0); ZCLAMP(Z1); ZCLAMP(Z2); ZCLAMP(Z3); ZCLAMP(Z4); ZCLAMP(Z5); ZCLAMP(Z6); ZCLAMP(Z7)

// ZBIAS8 starts the eight sums Z0–Z7 at the bias (Z12).
#define ZBIAS8 VMOVAPS Z12, Z0; VMOVAPS Z12, Z1; VMOVAPS Z12, Z2; VMOVAPS Z12, Z3; VMOVAPS Z12, Z4; VMOVAPS Z12, Z5; VMOVAPS Z12, Z6; VMOVAPS Z12, Z7

// ZTAP broadcasts tap R9's weight into Z8 and puts the address of its
// first input from base into R10.
#define ZTAP(base) MOVQ (BX)(R9*8), R10; VBROADCASTSS (DX)(R9*4), Z8; LEAQ (base)(R10*4), R10

// ZCHUNK4 adds a tap to the sums of a chunk of two rows (R10, R10+R13)
// of four vectors each, with masks k0–k3.
#define ZCHUNK4(k0, k1, k2, k3) \
	VFMADD231PS (R10), Z8, k0, Z0; \
	VFMADD231PS 64(R10), Z8, k1, Z1; \
	VFMADD231PS 128(R10), Z8, k2, Z2; \
	VFMADD231PS 192(R10), Z8, k3, Z3; \
	VFMADD231PS (R10)(R13*1), Z8, k0, Z4; \
	VFMADD231PS 64(R10)(R13*1), Z8, k1, Z5; \
	VFMADD231PS 128(R10)(R13*1), Z8, k2, Z6; \
	VFMADD231PS 192(R10)(R13*1), Z8, k3, Z7

// ZSTORE4 stores the four vectors a–d of a row at (p) with masks k0–k3.
#define ZSTORE4(a, b, c, d, p, k0, k1, k2, k3) \
	VMOVUPS a, k0, (p); \
	VMOVUPS b, k1, 64(p); \
	VMOVUPS c, k2, 128(p); \
	VMOVUPS d, k3, 192(p)

// func dwRowsAVX512(dst, src *float32, offs *int, w *float32, taps, rows, ow, wq int, bias, lo, hi float32, masks uint64)
TEXT ·dwRowsAVX512(SB), NOSPLIT, $0-88
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ offs+16(FP), BX
	MOVQ w+24(FP), DX
	MOVQ taps+32(FP), R8
	MOVQ rows+40(FP), R11
	MOVQ ow+48(FP), R12
	SHLQ $2, R12
	MOVQ wq+56(FP), R13
	SHLQ $2, R13
	LEAQ (R13)(R13*2), R14
	VBROADCASTSS bias+64(FP), Z12
	VBROADCASTSS lo+68(FP), Z13
	VBROADCASTSS hi+72(FP), Z14
	ZMASKS(AX)
	KXNORW K5, K5, K5
	CMPQ R12, $64
	JLE z1
	CMPQ R12, $128
	JLE z2

z4group:
	MOVQ ow+48(FP), CX
	MOVQ SI, AX
	MOVQ DI, R14

z4chunk:
	// Whole chunks take every lane; the last one the masks'.
	ZBIAS8
	KMOVW K5, K1
	KMOVW K5, K2
	KMOVW K5, K3
	KMOVW K5, K4
	CMPQ CX, $64
	JG z4taps
	ZMASKS(R9)

z4taps:
	XORQ R9, R9

z4tap:
	ZTAP(AX)
	ZCHUNK4(K1, K2, K3, K4)
	INCQ R9
	CMPQ R9, R8
	JLT z4tap
	ZCLAMP8
	ZSTORE4(Z0, Z1, Z2, Z3, R14, K1, K2, K3, K4)
	CMPQ R11, $1
	JEQ z4next
	ADDQ R12, R14
	ZSTORE4(Z4, Z5, Z6, Z7, R14, K1, K2, K3, K4)
	SUBQ R12, R14

z4next:
	ADDQ $256, AX
	ADDQ $256, R14
	SUBQ $64, CX
	JG z4chunk
	LEAQ (SI)(R13*2), SI
	LEAQ (DI)(R12*2), DI
	SUBQ $2, R11
	JG z4group
	JMP done512

	// Rows of 17 to 32 outputs: four rows of two vectors, Z0–Z3 and
	// Z4–Z7.
z2:
	ZBIAS8
	XORQ R9, R9

z2tap:
	ZTAP(SI)
	VFMADD231PS (R10), Z8, K1, Z0
	VFMADD231PS 64(R10), Z8, K2, Z4
	VFMADD231PS (R10)(R13*1), Z8, K1, Z1
	VFMADD231PS 64(R10)(R13*1), Z8, K2, Z5
	VFMADD231PS (R10)(R13*2), Z8, K1, Z2
	VFMADD231PS 64(R10)(R13*2), Z8, K2, Z6
	VFMADD231PS (R10)(R14*1), Z8, K1, Z3
	VFMADD231PS 64(R10)(R14*1), Z8, K2, Z7
	INCQ R9
	CMPQ R9, R8
	JLT z2tap
	ZCLAMP8
	MOVQ DI, AX
	VMOVUPS Z0, K1, (AX)
	VMOVUPS Z4, K2, 64(AX)
	DWNEXT(1, done512)
	VMOVUPS Z1, K1, (AX)
	VMOVUPS Z5, K2, 64(AX)
	DWNEXT(2, done512)
	VMOVUPS Z2, K1, (AX)
	VMOVUPS Z6, K2, 64(AX)
	DWNEXT(3, done512)
	VMOVUPS Z3, K1, (AX)
	VMOVUPS Z7, K2, 64(AX)
	LEAQ (SI)(R13*4), SI
	LEAQ (DI)(R12*4), DI
	SUBQ $4, R11
	JG z2
	JMP done512

	// Rows of up to 16 outputs: eight rows of one vector, Z0–Z7.
z1:
	ZBIAS8
	XORQ R9, R9

z1tap:
	ZTAP(SI)
	VFMADD231PS (R10), Z8, K1, Z0
	VFMADD231PS (R10)(R13*1), Z8, K1, Z1
	VFMADD231PS (R10)(R13*2), Z8, K1, Z2
	VFMADD231PS (R10)(R14*1), Z8, K1, Z3
	LEAQ (R10)(R13*4), R10
	VFMADD231PS (R10), Z8, K1, Z4
	VFMADD231PS (R10)(R13*1), Z8, K1, Z5
	VFMADD231PS (R10)(R13*2), Z8, K1, Z6
	VFMADD231PS (R10)(R14*1), Z8, K1, Z7
	INCQ R9
	CMPQ R9, R8
	JLT z1tap
	ZCLAMP8
	MOVQ DI, AX
	VMOVUPS Z0, K1, (AX)
	DWNEXT(1, done512)
	VMOVUPS Z1, K1, (AX)
	DWNEXT(2, done512)
	VMOVUPS Z2, K1, (AX)
	DWNEXT(3, done512)
	VMOVUPS Z3, K1, (AX)
	DWNEXT(4, done512)
	VMOVUPS Z4, K1, (AX)
	DWNEXT(5, done512)
	VMOVUPS Z5, K1, (AX)
	DWNEXT(6, done512)
	VMOVUPS Z6, K1, (AX)
	DWNEXT(7, done512)
	VMOVUPS Z7, K1, (AX)
	LEAQ (SI)(R13*8), SI
	LEAQ (DI)(R12*8), DI
	SUBQ $8, R11
	JG z1

done512:
	VZEROUPPER
	RET

// func dwCopyRowsAVX2(dst, src *float32, rows, n, srcPitch, dstPitch int)
TEXT ·dwCopyRowsAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+16(FP), R8
	MOVQ n+24(FP), CX
	MOVQ srcPitch+32(FP), R10
	SHLQ $2, R10
	MOVQ dstPitch+40(FP), R11
	SHLQ $2, R11
	// Y15 takes the n mod 8 lanes of a row's last vector, R9 counts them
	// and CX the whole vectors before it.
	MOVQ CX, R9
	ANDQ $7, R9
	SHRQ $3, CX
	LEAQ (R9*4), AX
	LEAQ dwMask<>+32(SB), BX
	SUBQ AX, BX
	VMOVDQU (BX), Y15

copyrow:
	MOVQ SI, DX
	MOVQ DI, BX
	MOVQ CX, R12
	TESTQ R12, R12
	JZ copytail

copyvec:
	VMOVUPS (DX), Y0
	VMOVUPS Y0, (BX)
	ADDQ $32, DX
	ADDQ $32, BX
	DECQ R12
	JNZ copyvec

copytail:
	TESTQ R9, R9
	JZ copynext
	// The lanes past the row load as zeros and are stored so.
	VMASKMOVPS (DX), Y15, Y0
	VMOVUPS Y0, (BX)

copynext:
	ADDQ R10, SI
	ADDQ R11, DI
	DECQ R8
	JNZ copyrow
	VZEROUPPER
	RET

// func dwSplitRowsAVX2(even, odd, src *float32, rows, q, re, ro, m, srcPitch, dstPitch int)
TEXT ·dwSplitRowsAVX2(SB), NOSPLIT, $0-80
	MOVQ even+0(FP), DI
	MOVQ odd+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ rows+24(FP), R8
	MOVQ q+32(FP), CX
	MOVQ m+56(FP), R9
	MOVQ srcPitch+64(FP), R11
	SHLQ $2, R11
	MOVQ dstPitch+72(FP), R12
	SHLQ $2, R12
	// The tail's masks: Y12 and Y13 its m inputs, Y14 its re even and
	// Y15 its ro odd outputs.
	LEAQ dwMask<>+32(SB), R10
	MOVQ R9, AX
	CMPQ AX, $8
	JLE lomask
	MOVQ $8, AX

lomask:
	SHLQ $2, AX
	MOVQ R10, BX
	SUBQ AX, BX
	VMOVDQU (BX), Y12
	MOVQ R9, AX
	SUBQ $8, AX
	JGE himask
	XORQ AX, AX

himask:
	SHLQ $2, AX
	MOVQ R10, BX
	SUBQ AX, BX
	VMOVDQU (BX), Y13
	MOVQ re+40(FP), AX
	SHLQ $2, AX
	MOVQ R10, BX
	SUBQ AX, BX
	VMOVDQU (BX), Y14
	MOVQ ro+48(FP), AX
	SHLQ $2, AX
	MOVQ R10, BX
	SUBQ AX, BX
	VMOVDQU (BX), Y15

splitrow:
	MOVQ SI, AX
	MOVQ DI, BX
	MOVQ DX, R13
	MOVQ CX, R14
	TESTQ R14, R14
	JZ splittail

splitvec:
	VMOVUPS 0(AX), Y0
	VMOVUPS 32(AX), Y1
	DWSPLIT
	VMOVUPS Y2, (BX)
	VMOVUPS Y3, (R13)
	ADDQ $64, AX
	ADDQ $32, BX
	ADDQ $32, R13
	DECQ R14
	JNZ splitvec

splittail:
	TESTQ R9, R9
	JZ splitnext
	VMASKMOVPS 0(AX), Y12, Y0
	VMASKMOVPS 32(AX), Y13, Y1
	DWSPLIT
	VMASKMOVPS Y2, Y14, (BX)
	VMASKMOVPS Y3, Y15, (R13)

splitnext:
	ADDQ R11, SI
	ADDQ R12, DI
	ADDQ R12, DX
	DECQ R8
	JNZ splitrow
	VZEROUPPER
	RET
