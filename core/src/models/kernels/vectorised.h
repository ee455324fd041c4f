#pragma once
// NPE_VECTORISED marks a loop kernel to be compiled for AVX-512, AVX2 and plain x86-64, the
// loader picking the best the CPU has (GCC and clang function multiversioning), so that plain
// loops vectorise as wide as the machine allows without building the project for one CPU.
// Elsewhere it compiles once, for the target's baseline.

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NPE_VECTORISED __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define NPE_VECTORISED
#endif
