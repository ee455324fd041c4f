#include "guarded_operands.h"

#include <cstdint>

#include <torch/torch.h>

namespace npe {
namespace {

constexpr int64_t kGuardBytes = 4096;
constexpr int kPattern = 0xA5;

// The bytes of the view's own elements, set to zero in a copy of `bytes`, so that two buffers
// compare equal exactly when they differ only there.
torch::Tensor without_view_elements(const torch::Tensor& bytes, const torch::Tensor& view,
                                    int64_t front) {
  auto copy = bytes.clone();
  const int64_t element = view.element_size();
  const auto typed = copy.narrow(0, front, bytes.size(0) - front)
                         .narrow(0, 0, (bytes.size(0) - front) / element * element)
                         .view(view.scalar_type());
  typed.as_strided(view.sizes(), view.strides(), typed.storage_offset()).zero_();
  return copy;
}

}  // namespace

int64_t strided_extent_bytes(const torch::Tensor& t) {
  if (t.numel() == 0) return 0;
  int64_t last = 0;
  for (int64_t d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * t.stride(d);
  return (last + 1) * t.element_size();
}

GuardedOperand::GuardedOperand(const torch::Tensor& t) {
  TORCH_CHECK(t.device().is_cpu(), "GuardedOperand: CPU tensors only");
  for (int64_t d = 0; d < t.dim(); ++d)
    TORCH_CHECK(t.stride(d) >= 0, "GuardedOperand: negative strides");
  const int64_t element = t.element_size();
  const auto misalignment = static_cast<int64_t>(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64);
  m_front = kGuardBytes + misalignment / element * element;
  m_extent = strided_extent_bytes(t);
  // Whole elements throughout, so that the typed view below covers the buffer.
  const int64_t back = kGuardBytes + (element - (m_front + m_extent) % element) % element;
  m_bytes = torch::full({m_front + m_extent + back}, kPattern, torch::kUInt8);
  const auto typed = m_bytes.narrow(0, m_front, m_extent + back).view(t.scalar_type());
  m_view = typed.as_strided(t.sizes(), t.strides(), typed.storage_offset());
  m_view.copy_(t);
  m_snapshot = m_bytes.clone();
}

std::string GuardedOperand::find_stray_write(bool is_output) const {
  const auto now = is_output ? without_view_elements(m_bytes, m_view, m_front) : m_bytes;
  const auto before = is_output ? without_view_elements(m_snapshot, m_view, m_front) : m_snapshot;
  if (torch::equal(now, before)) return {};
  const auto changed = now.ne(before).nonzero();
  const int64_t first = changed[0][0].item<int64_t>();
  const int64_t last = changed[changed.size(0) - 1][0].item<int64_t>();
  auto where = [&](int64_t at) {
    if (at < m_front) return std::to_string(m_front - at) + " bytes before the view";
    if (at >= m_front + m_extent)
      return std::to_string(at - m_front - m_extent) + " bytes past the view's end";
    return std::string(is_output ? "in a hole of the view, " : "inside the view, ") +
           std::to_string(at - m_front) + " bytes from its start";
  };
  return std::to_string(changed.size(0)) + " bytes changed, the first " + where(first) +
         ", the last " + where(last) + " (extent " + std::to_string(m_extent) + " bytes)";
}

}  // namespace npe
