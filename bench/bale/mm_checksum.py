#!/usr/bin/env python3
"""The checksum of a MatrixMarket file that transit's matrix_checksum computes for a matrix
(apps/spmat/spmat.hpp): the sum mod 2^64 of splitmix64's finaliser of row * 2^32 + col over the
nonzeros (0-based), the number of nonzeros, and the sum of the values (0 for a pattern file).

    bench/bale/mm_checksum.py FILE...      prints "structure nnz value_sum" per file
"""
import sys

MASK = (1 << 64) - 1


def spmat_hash(row, col):
    z = ((row << 32) + col) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def checksum(path):
    with open(path) as f:
        banner = f.readline().split()
        weighted = banner[3] != "pattern"
        line = f.readline()
        while line.startswith("%"):
            line = f.readline()
        structure, nnz, values = 0, 0, 0.0
        for line in f:
            parts = line.split()
            if not parts or parts[0].startswith("%"):
                continue
            structure = (structure + spmat_hash(int(parts[0]) - 1, int(parts[1]) - 1)) & MASK
            nnz += 1
            if weighted:
                values += float(parts[2])
    return structure, nnz, values


if __name__ == "__main__":
    for path in sys.argv[1:]:
        s, n, v = checksum(path)
        print(f"0x{s:016x} {n} {v:.6f}")
