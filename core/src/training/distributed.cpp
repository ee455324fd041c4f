#include "npe/training/distributed.h"

#include <cstdlib>
#include <string>

#include <torch/torch.h>
#include <torch/version.h>

#include "npe/errors.h"

#if defined(NPE_HAVE_C10D_GLOO)
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif
#if defined(NPE_HAVE_C10D_NCCL)
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace npe {
namespace {

// An integer environment variable, or `fallback` when unset.
int env_int(const char* name, int fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 0 || value > 1 << 30) {
    throw ConfigError(std::string("environment variable ") + name + "='" + text +
                      "' is not a non-negative integer");
  }
  return static_cast<int>(value);
}

#if defined(NPE_HAVE_C10D_GLOO)

// libtorch 2 made c10d's ProcessGroup a dispatcher over per-device Backends, and Gloo and NCCL
// are Backends there; in 1.13 they are ProcessGroups themselves. Either offers the collectives
// used here.
#if TORCH_VERSION_MAJOR >= 2
using C10dCollectives = c10d::Backend;
#else
using C10dCollectives = c10d::ProcessGroup;
#endif

class C10dGroup final : public DataParallelGroup {
 public:
  C10dGroup(c10::intrusive_ptr<C10dCollectives> group, std::string backend)
      : m_group(std::move(group)), m_backend(std::move(backend)) {}
  int rank() const override { return m_group->getRank(); }
  int world_size() const override { return m_group->getSize(); }
  std::string backend() const override { return m_backend; }
  void broadcast(std::vector<torch::Tensor>& tensors) override {
    for (auto& tensor : tensors) {
      std::vector<at::Tensor> one{tensor};
      m_group->broadcast(one)->wait();
    }
  }
  void all_reduce_sum(torch::Tensor& tensor) override {
    std::vector<at::Tensor> one{tensor};
    m_group->allreduce(one)->wait();
  }

 private:
  c10::intrusive_ptr<C10dCollectives> m_group;
  std::string m_backend;
};

#endif

}  // namespace

std::optional<DistributedEnvironment> distributed_environment_from_env() {
  if (!std::getenv("WORLD_SIZE")) return std::nullopt;
  DistributedEnvironment env;
  env.world_size = env_int("WORLD_SIZE", 1);
  env.rank = env_int("RANK", 0);
  env.local_rank = env_int("LOCAL_RANK", env.rank);
  env.master_port = env_int("MASTER_PORT", env.master_port);
  if (const char* addr = std::getenv("MASTER_ADDR"); addr && *addr) env.master_addr = addr;
  if (env.world_size < 1) throw ConfigError("WORLD_SIZE must be >= 1");
  if (env.rank >= env.world_size) {
    throw ConfigError("RANK=" + std::to_string(env.rank) +
                      " is outside [0, WORLD_SIZE=" + std::to_string(env.world_size) + ")");
  }
  if (env.master_port < 1 || env.master_port > 65535) {
    throw ConfigError("MASTER_PORT=" + std::to_string(env.master_port) +
                      " is not a TCP port (1..65535)");
  }
  return env;
}

bool distributed_training_available() {
#if defined(NPE_HAVE_C10D_GLOO)
  return true;
#else
  return false;
#endif
}

std::shared_ptr<DataParallelGroup> join_process_group(const DistributedEnvironment& environment,
                                                      torch::Device device) {
#if defined(NPE_HAVE_C10D_GLOO)
  c10::intrusive_ptr<c10d::Store> store;
  try {
    c10d::TCPStoreOptions options;
    options.port = static_cast<uint16_t>(environment.master_port);
    // torchrun's agent already serves a store at MASTER_PORT (and says so): every rank joins
    // it as a client, under a prefix per restart, as PyTorch's own env:// rendezvous does.
    const char* agent_store = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
    const bool use_agent_store = agent_store && std::string(agent_store) == "True";
    options.isServer = environment.rank == 0 && !use_agent_store;
    options.numWorkers = environment.world_size;
    store = c10::make_intrusive<c10d::TCPStore>(environment.master_addr, options);
    if (use_agent_store) {
      const char* restarts = std::getenv("TORCHELASTIC_RESTART_COUNT");
      store = c10::make_intrusive<c10d::PrefixStore>(
          std::string("/worker/attempt_") + (restarts ? restarts : "0"), store);
    }
  } catch (const std::exception& e) {
    throw Error("cannot reach the rendezvous at " + environment.master_addr + ":" +
                std::to_string(environment.master_port) + " (rank " +
                std::to_string(environment.rank) + "): " + e.what());
  }
#if defined(NPE_HAVE_C10D_NCCL)
  if (device.is_cuda()) {
    auto nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, environment.rank,
                                                            environment.world_size);
    return std::make_shared<C10dGroup>(nccl, "nccl");
  }
#endif
  (void)device;
  try {
    auto options = c10d::ProcessGroupGloo::Options::create();
    // The interface that reaches MASTER_ADDR is the one the ranks talk over.
    options->devices.push_back(
        c10d::ProcessGroupGloo::createDeviceForHostname(environment.master_addr));
    auto gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(store, environment.rank,
                                                            environment.world_size, options);
    return std::make_shared<C10dGroup>(gloo, "gloo");
  } catch (const std::exception& e) {
    throw Error("cannot set up the Gloo process group (rank " + std::to_string(environment.rank) +
                " of " + std::to_string(environment.world_size) + "): " + e.what());
  }
#else
  (void)environment;
  (void)device;
  throw ConfigError(
      "this build of npe has no distributed training: its libtorch was found without c10d's "
      "Gloo headers (install libgloo-dev and rebuild)");
#endif
}

}  // namespace npe
