#pragma once
// What the npe bench suites share: the machine description of every row, the models a suite
// compares, timing summaries, the arithmetic peak measured in the same run, and the authors'
// reference workload's rows.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "npe/models/model.h"
#include "npe/models/model_catalog.h"

namespace npe::cli {

/// Whether `name` passes the filter (an empty filter passes everything).
bool wanted(const std::vector<std::string>& filter, const std::string& name);
/// The CPU's model name from /proc/cpuinfo.
std::string cpu_model();
/// The shipped models of the task, or those in --models-dir.
std::vector<ShippedModel> bench_models(const std::optional<std::string>& dir,
                                       const std::string& task = "gp1d");
/// What every row records about the machine: CPU, threads, precision, device, libtorch.
nlohmann::json machine_json(torch::Device device);

struct Timing {
  double median_ms, p10_ms, p90_ms;
};
Timing summarise(std::vector<double> ms);

/// Float32 matrix-multiply throughput of this machine, measured in the same run.
double matmul_peak_gflops(torch::Device device, int64_t n);

/// Kinds timed on the reference workload when --models is not given: those the authors'
/// benchmark script also builds.
constexpr const char* kReferenceKinds = "tnp,tetnp";

/// Times fresh reference-size models of each kind with `time` (milliseconds per run) and prints
/// or dumps one row per kind, labelled with the workload's sizes.
int bench_reference(const std::string& models, torch::Device device, bool json,
                    const nlohmann::json& sizes, const char* title,
                    const std::function<std::vector<double>(NeuralProcessImpl&)>& time);

}  // namespace npe::cli
