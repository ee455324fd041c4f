#pragma once
// Data-parallel training across processes and machines on PyTorch's own distributed engine
// (c10d): a TCPStore rendezvous and a Gloo (CPU) or NCCL (CUDA) process group, set up from the
// variables torchrun exports.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/types.h>

namespace npe {

/// The collective operations data-parallel training needs.
class DataParallelGroup {
 public:
  virtual ~DataParallelGroup() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  /// "gloo" or "nccl".
  virtual std::string backend() const = 0;
  /// Replaces every rank's tensors by rank 0's, in place.
  virtual void broadcast(std::vector<torch::Tensor>& tensors) = 0;
  /// Sums the tensor over the ranks, in place.
  virtual void all_reduce_sum(torch::Tensor& tensor) = 0;
};

/// torchrun's description of this process: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
/// MASTER_PORT.
struct DistributedEnvironment {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
};

/// The environment when WORLD_SIZE is set (by torchrun or by hand), else nullopt. Throws
/// ConfigError for malformed or inconsistent values (RANK outside [0, WORLD_SIZE), a port
/// outside [1, 65535], ...).
std::optional<DistributedEnvironment> distributed_environment_from_env();

/// Whether this build has a c10d process group (Gloo; NCCL too in CUDA builds that ship it).
bool distributed_training_available();

/// Joins the process group: rank 0 serves the TCPStore at MASTER_ADDR:MASTER_PORT, every rank
/// connects. NCCL for CUDA devices when the build has it, else Gloo. Throws ConfigError when
/// this build has no c10d, Error when the rendezvous fails.
std::shared_ptr<DataParallelGroup> join_process_group(const DistributedEnvironment& environment,
                                                      torch::Device device);

}  // namespace npe
