// The helpers the npe bench suites share (bench_common.h).

#include "bench_common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include <torch/torch.h>

#include "memory_bench.h"
#include "model_file.h"
#include "npe/blas_kernels.h"
#include "npe/data/era5_tasks.h"
#include "npe/data/gp_tasks.h"
#include "npe/data/task_registry.h"
#include "npe/models/checkpoint.h"
#include "npe/models/compute_settings.h"
#include "npe/models/flops.h"
#include "npe/models/model_catalog.h"
#include "npe/models/model_registry.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/runtime.h"
#include "npe/seeds.h"
#include "npe/training/evaluation.h"
#include "npe/training/training.h"
#include "npe/training/training_job.h"
#include "option_values.h"
#include "peak_bench.h"
#include "reference_workload.h"
#include "stopwatch.h"
#include "terminal_progress.h"

namespace npe::cli {

bool wanted(const std::vector<std::string>& filter, const std::string& name) {
  return filter.empty() || std::find(filter.begin(), filter.end(), name) != filter.end();
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

std::vector<ShippedModel> bench_models(const std::optional<std::string>& dir,
                                       const std::string& task) {
  std::vector<std::string> problems;
  auto models = dir ? find_models_in(*dir, &problems)
                    : find_shipped_models(task_info(task).models_folder, &problems);
  for (const auto& p : problems) std::fprintf(stderr, "npe bench: skipped: %s\n", p.c_str());
  return models;
}

nlohmann::json machine_json(torch::Device device) {
  return {{"cpu", cpu_model()},
          {"threads", at::get_num_threads()},
          {"precision", precision_name(pairwise_precision())},
          {"te_attention", attention_implementation_name(attention_implementation())},
          {"device", describe_device(device)},
          {"libtorch", libtorch_version()},
          {"blas", describe_blas_kernels()}};
}

Timing summarise(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) {
    return ms[static_cast<size_t>(std::lround(q * double(ms.size() - 1)))];
  };
  return {at(0.5), at(0.1), at(0.9)};
}

double matmul_peak_gflops(torch::Device device, int64_t n) {
  auto a = torch::randn({n, n}, torch::TensorOptions().device(device));
  auto b = torch::randn({n, n}, torch::TensorOptions().device(device));
  auto sync = [device] {
    if (device.is_cuda()) torch::cuda::synchronize();
  };
  a.matmul(b);
  sync();
  double best = 0.0;
  for (int i = 0; i < 5; ++i) {
    const auto start = Clock::now();
    auto c = a.matmul(b);
    sync();
    best = std::max(best, 2.0 * n * n * n / seconds_since(start) / 1e9);
  }
  return best;
}

namespace {

void print_reference_rows(const nlohmann::json& rows, const char* what) {
  std::printf("%s\n", what);
  std::printf("%-10s %10s %10s %10s %6s\n", "model", "median ms", "p10 ms", "p90 ms", "runs");
  for (const auto& r : rows) {
    std::printf("%-10s %10.2f %10.2f %10.2f %6lld\n", r["model"].get<std::string>().c_str(),
                r["median_ms"].get<double>(), r["p10_ms"].get<double>(), r["p90_ms"].get<double>(),
                (long long)r["runs"].get<int64_t>());
  }
}

nlohmann::json reference_row(const std::string& kind, const std::vector<double>& ms,
                             torch::Device device) {
  const auto t = summarise(ms);
  return {{"model", kind},
          {"workload", "reference"},
          {"median_ms", t.median_ms},
          {"p10_ms", t.p10_ms},
          {"p90_ms", t.p90_ms},
          {"runs", static_cast<int64_t>(ms.size())},
          {"machine", machine_json(device)}};
}

}  // namespace

int bench_reference(const std::string& models, torch::Device device, bool json,
                    const nlohmann::json& sizes, const char* title,
                    const std::function<std::vector<double>(NeuralProcessImpl&)>& time) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& kind : parse_list(models)) {
    torch::manual_seed(0);
    auto model = make_model(reference_model_config(kind));
    model->to(device);
    auto row = reference_row(kind, time(*model), device);
    row.update(sizes);
    rows.push_back(row);
  }
  if (json) {
    std::printf("%s\n", rows.dump().c_str());
    return 0;
  }
  print_reference_rows(rows, title);
  return 0;
}

}  // namespace npe::cli
