#pragma once
// Guarded copies of a product's operands, for hunting writes out of bounds in code that the
// sanitizers cannot see (oneDNN's JIT kernels; tile_matmul.cpp runs every product on such
// copies when NPE_TILE_MATMUL_GUARD is set). Each copy lies in a buffer of its own with 4 KiB of
// a known byte pattern before and after the view's extent, the holes of a strided view filled
// with the pattern too, and the view's misalignment modulo 64 bytes kept, so that the kernel
// runs on the layout it would have run on. After the product, an input must be byte for byte
// as it was, and an output changed only at its own elements.

#include <string>

#include <torch/types.h>

namespace npe {

class GuardedOperand {
 public:
  /// Copies `t` (any strided CPU view) into a guarded buffer.
  explicit GuardedOperand(const torch::Tensor& t);
  /// The copy, with t's sizes and strides.
  const torch::Tensor& view() const { return m_view; }
  /// Empty if no byte changed outside the view's elements (or anywhere, for an input), else
  /// where the first change is, relative to the view's extent.
  std::string find_stray_write(bool is_output) const;

 private:
  torch::Tensor m_bytes;     // uint8: guard, the view's extent, guard
  torch::Tensor m_snapshot;  // m_bytes as it was before the product
  torch::Tensor m_view;
  int64_t m_front = 0, m_extent = 0;  // bytes
};

/// The extent in bytes of a strided view: from its first element to the end of its last.
int64_t strided_extent_bytes(const torch::Tensor& t);

}  // namespace npe
