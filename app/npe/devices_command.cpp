// npe devices: the devices this npe can train on, for a training tab that runs npe on another
// computer (over ssh) or another npe program on this one (a CUDA build): it fills its Device
// list from this answer and tells an npe too old to have the command by its absence.

#include <cstdio>
#include <memory>
#include <thread>

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "npe/blas_kernels.h"
#include "npe/runtime.h"
#include "npe/shipped_files.h"

namespace npe::cli {
namespace {

// Raised when the answer changes in a way an older reader would misread.
constexpr int kDevicesProtocol = 1;

int list_devices(bool json) {
  nlohmann::json devices = nlohmann::json::array();
  const auto cores = static_cast<int>(std::thread::hardware_concurrency());
  devices.push_back(
      {{"name", "cpu"}, {"description", "CPU (" + std::to_string(cores) + " cores)"}});
  // The names `npe train --device` takes: it trains on the first GPU.
  if (torch::cuda::is_available()) {
    const auto gpus = torch::cuda::device_count();
    devices.push_back(
        {{"name", "cuda"},
         {"description", "CUDA (" + std::to_string(gpus) +
                             (gpus == 1 ? " GPU)" : " GPUs; npe trains on the first)")}});
  }
  // Where this npe finds the shipped models and data, in search order (npe/shipped_files.h):
  // an installed or unpacked package names its own share/np-explorer first.
  nlohmann::json shipped = nlohmann::json::object();
  for (const char* kind : {"models", "data"}) {
    shipped[kind] = nlohmann::json::array();
    const auto* environment = std::string(kind) == "models" ? "NPE_MODELS_DIR" : "NPE_DATA_DIR";
    for (const auto& dir : shipped_file_dirs(kind, environment))
      shipped[kind].push_back(dir.string());
  }
  const nlohmann::json answer = {{"protocol", kDevicesProtocol},
                                 {"libtorch", libtorch_version()},
                                 {"blas", describe_blas_kernels()},
                                 {"devices", devices},
                                 {"shipped", shipped}};
  if (json) {
    std::printf("%s\n", answer.dump().c_str());
    return 0;
  }
  for (const auto& d : devices) {
    std::printf("%-8s %s\n", d["name"].get<std::string>().c_str(),
                d["description"].get<std::string>().c_str());
  }
  return 0;
}

}  // namespace

Command add_devices_command(CLI::App& app) {
  auto* devices = app.add_subcommand("devices", "List the devices npe can train on here");
  auto json = std::make_shared<bool>(false);
  auto runtime = std::make_shared<RuntimeArguments>();
  devices->add_flag("--json", *json,
                    "One JSON object: protocol, libtorch, blas, devices, and the folders searched "
                    "for the shipped models and data");
  // Accepted like every other command's, so that one command line template serves them all.
  add_thread_option(*devices, *runtime);
  // The lambda owns what the options write into: CLI11 keeps pointers to it until parsing.
  return {devices, [json, runtime] {
            (void)runtime;
            return list_devices(*json);
          }};
}

}  // namespace npe::cli
