#!/usr/bin/python3
"""Write the NumPy fixtures of npy_test.go into this folder.

Run once with /usr/bin/python3 from this folder; the files are committed and
the tests do not need Python. The values follow the formulas in npy_test.go.
"""

import numpy as np

CODES = ["f2", "f4", "f8", "i1", "i2", "i4", "i8",
         "u1", "u2", "u4", "u8", "b1", "c8", "c16"]
SHAPE = (2, 3, 4)


def values(code):
    a = np.arange(24, dtype=np.float64).reshape(SHAPE)
    kind = code[0]
    if kind == "f":
        return ((a - 10) * 0.5).astype(code)
    if kind == "i":
        return (a - 10).astype(code)
    if kind == "u":
        return (a * 3).astype(code)
    if kind == "b":
        return (a % 3 == 0)
    return ((a - 10) * 0.5 + 1j * a).astype(code)


def main():
    for code in CODES:
        a = values(code)
        np.save(code + ".npy", a)
        if a.dtype.itemsize > 1:
            np.save(code + "_be.npy", a.astype(a.dtype.newbyteorder(">")))
    np.save("f4_fortran.npy", np.asfortranarray(values("f4")))
    np.save("i8_be_fortran.npy",
            np.asfortranarray(values("i8").astype(">i8")))
    with open("f8_v2.npy", "wb") as f:
        np.lib.format.write_array(f, values("f8"), version=(2, 0))
    with open("i4_v3.npy", "wb") as f:
        np.lib.format.write_array(f, values("i4"), version=(3, 0))
    np.save("scalar.npy", np.array(3.25))
    np.save("empty.npy", np.zeros((0, 3), dtype=np.float32))
    np.save("vector.npy", np.arange(5, dtype=np.int64))
    text = np.array(["", "a", "h\u00e9llo", "\u65e5\u672c\u8a9e", "\U0001f642x"])
    np.save("U.npy", text)
    np.save("U_be.npy", text.astype(">U5"))
    np.save("U_fortran.npy",
            np.asfortranarray(np.array([["a", "bb", "ccc"], ["dddd", "e", ""]])))
    np.save("S.npy", np.array([b"abc", b"", b"\xff\x00x"]))


if __name__ == "__main__":
    main()
