#pragma once
// Derivation of independent, reproducible seeds for training steps and evaluation batches.

#include <cstdint>

namespace npe {

/// SplitMix64 finaliser: well-mixed 64-bit output for any input.
constexpr uint64_t mix_seed(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// Seed of item `index` of the stream `stream` (training, validation, test) under `seed`.
constexpr uint64_t derive_seed(uint64_t seed, uint64_t stream, uint64_t index) {
  return mix_seed(mix_seed(mix_seed(seed) ^ stream) ^ index);
}

/// Streams, so that training, validation and test tasks never coincide.
enum SeedStream : uint64_t { kTrainStream = 1, kValidationStream = 2, kTestStream = 3 };

}  // namespace npe
