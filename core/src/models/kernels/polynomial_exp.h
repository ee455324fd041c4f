#pragma once
// exp(x) for float as plain arithmetic, so that loops calling it vectorise (glibc's expf is a
// call per element).

#include <cstdint>
#include <cstring>

namespace npe {

// exp(x) = 2^n p(r) with n = round(x / ln 2) and r = x - n ln 2 in [-ln 2 / 2, ln 2 / 2] (ln 2
// split in a part n times which is exact and a correction), p the Cephes expf polynomial
// (within 2 ulp of expf). Written without branches or calls so that loops over it vectorise. x
// is clamped to [-87, 88], where 2^n stays a normal float: exp(-87) = 1.6e-38 stands in for
// anything smaller. NaN stays NaN.
inline float polynomial_exp(float x) {
  x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
  // Adding 1.5 * 2^23 rounds x / ln 2 to an integer held in the low bits of the sum.
  constexpr float kRound = 12582912.0f;
  const float shifted = x * 1.44269504088896341f + kRound;
  const float n = shifted - kRound;
  const float r = x - n * 0.693145751953125f - n * 1.428606765330187e-06f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // Unsigned: for a NaN input the bits are arbitrary, and a signed shift would overflow.
  uint32_t bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  const uint32_t exponent = (bits - 0x4B400000u + 127u) << 23;  // 2^n as a float's bits
  float power;
  std::memcpy(&power, &exponent, sizeof power);
  return p * power;
}

}  // namespace npe
