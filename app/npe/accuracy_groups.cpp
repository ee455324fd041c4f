#include "accuracy_groups.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace npe::cli {
namespace {

// Mean and standard error over variants (the independent units of a group).
std::pair<double, double> mean_and_stderr(const std::vector<double>& values) {
  const double n = double(values.size());
  double mean = 0.0;
  for (double v : values) mean += v / n;
  double squares = 0.0;
  for (double v : values) squares += (v - mean) * (v - mean);
  const double se = values.size() > 1 ? std::sqrt(squares / (n - 1.0) / n) : std::nan("");
  return {mean, se};
}

}  // namespace

void print_group_summary(const VariantResults& r, const TaskSource& source) {
  if (r.by_group.empty()) return;
  // Groups in the order the variants named them.
  std::vector<std::string> ordered;
  for (const auto& v : source.evaluation_variants()) {
    if (!v.group.empty() && std::find(ordered.begin(), ordered.end(), v.group) == ordered.end())
      ordered.push_back(v.group);
  }
  const auto k = r.by_group.begin()->second.begin()->second.size();
  std::printf(
      "\nSummary over %zu variants per group (± standard error over variants: they are the "
      "independent units)\n%-18s",
      k, "model");
  for (const auto& g : ordered) std::printf(" %16s %9s", ("LL " + g).c_str(), "cov90");
  if (ordered.size() == 2) std::printf(" %20s", (ordered[1] + " − " + ordered[0]).c_str());
  std::printf("\n");
  for (const auto& model : r.models) {
    std::printf("%-18s", model.c_str());
    std::vector<std::vector<double>> lls;
    for (const auto& g : ordered) {
      const auto& results = r.by_group.at(g).at(model);
      std::vector<double> ll, coverage;
      for (const auto& result : results) {
        ll.push_back(result.ll_mean);
        coverage.push_back(result.coverage[1]);
      }
      const auto [m, se] = mean_and_stderr(ll);
      std::printf(" %8.3f ± %5.3f %9.2f", m, se, mean_and_stderr(coverage).first);
      lls.push_back(ll);
    }
    if (lls.size() == 2 && lls[0].size() == lls[1].size()) {
      std::vector<double> difference;
      for (size_t i = 0; i < lls[0].size(); ++i) difference.push_back(lls[1][i] - lls[0][i]);
      const auto [m, se] = mean_and_stderr(difference);
      std::printf(" %11.3f ± %5.3f", m, se);
    }
    std::printf("\n");
  }
  if (const auto* era5 = dynamic_cast<const Era5TaskSource*>(&source)) {
    std::printf(
        "Log-likelihoods in nats per target in standardised units (σ = %.4f %s); per %s, "
        "subtract ln σ = %.4f.\n",
        era5->output_scale(), era5->field().units.c_str(), era5->field().units.c_str(),
        std::log(era5->output_scale()));
  }
}

}  // namespace npe::cli
