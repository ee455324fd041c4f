#pragma once
// How TE models compute their pairwise MLPs and attention: process-wide run-time choices, like
// the thread count (they do not change what a checkpoint holds).

#include <cstdint>
#include <string>

namespace npe {

/// fp32: float32 throughout. bf16: the pairwise MLP's matrix products of TE models, and the
/// linear layers of BSA-TNP's blocks, take bfloat16 inputs (many CPUs and GPUs run these
/// several times faster); softmax, the weighted sum over keys, gradients' accumulation, the
/// loss and the optimiser state stay in float32.
enum class Precision { fp32, bf16 };

/// "fp32", "bf16" or "auto" (what auto_precision() chose, auto_precision.h). Throws ConfigError
/// for other names, and for bf16 where this CPU cannot run it.
Precision parse_precision(const std::string& name);
std::string precision_name(Precision precision);

void set_pairwise_precision(Precision precision);
Precision pairwise_precision();

/// How TE attention computes its pairwise part (the MLP rho on every query-key pair, the
/// softmax and the weighted sum):
/// - fused: on the CPU in float32, pair tiles that stay in cache from the dot products to the
///   weighted sum (pairwise_kernel_attention.h), keeping rho's second activation for the
///   backward pass; elsewhere (CUDA, float64) the plain operations.
/// - plain: one libtorch operation after another on whole pair tensors (the reference the
///   others are tested and benchmarked against).
/// - blocked: query rows a block at a time, nothing inside a block kept for the backward pass,
///   which recomputes each block (blocked_queries.h): memory bounded by one block's pair
///   tensors (attention_block_bytes), on every device; inside a block, fused where it applies.
/// - automatic (the default): fused on the CPU in float32 unless what it would keep for the
///   backward pass of one call exceeds a quarter of a block budget, blocked otherwise (CUDA,
///   float64, image-sized trainings). A training step makes many calls (a paper-size TE-PT-TNP
///   15), each keeping its pairs until the backward pass: at a budget of a sixteenth of the
///   available memory, fifteen such calls keep at most a quarter of it.
enum class AttentionImplementation { automatic, fused, plain, blocked };

void set_attention_implementation(AttentionImplementation implementation);
AttentionImplementation attention_implementation();

/// "auto", "fused", "plain" or "blocked"; throws ConfigError for other names.
AttentionImplementation parse_attention_implementation(const std::string& name);
std::string attention_implementation_name(AttentionImplementation implementation);

/// The memory one block of the blocked TE attention may take while it is recomputed and
/// differentiated. 0 (the default) chooses from the memory available now: on the CPU a
/// sixteenth of the system's available memory, on CUDA an eighth of the device's free memory
/// (where the CUDA runtime answers; else 1 GiB), each between 64 MiB and 2 GiB.
void set_attention_block_bytes(int64_t bytes);
int64_t attention_block_bytes(bool cuda);

/// Inside its scope, when `enabled`, libtorch's autocast runs linear layers and matrix products
/// on `device` with bfloat16 inputs (float32 accumulation inside the products); element-wise
/// operations keep their inputs' type, so a float32 residual stream stays float32. Used by
/// BSA-TNP's blocks under Precision::bf16. Nests; restores the previous state.
class Bf16Autocast {
 public:
  Bf16Autocast(bool enabled, bool cuda);
  ~Bf16Autocast();
  Bf16Autocast(const Bf16Autocast&) = delete;
  Bf16Autocast& operator=(const Bf16Autocast&) = delete;

 private:
  bool m_enabled, m_cuda, m_was_enabled = false;
  int m_previous_dtype = 0;
};

/// Autocast off inside its scope (kernels that need float32 inputs), restored after.
class AutocastOff {
 public:
  AutocastOff();
  ~AutocastOff();
  AutocastOff(const AutocastOff&) = delete;
  AutocastOff& operator=(const AutocastOff&) = delete;

 private:
  bool m_cpu, m_cuda;
};

}  // namespace npe
