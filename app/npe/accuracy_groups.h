#pragma once
// npe bench accuracy's summary over a task's groups of evaluation variants (ERA5: each region's
// test blocks): mean log-likelihood ± s.e. over the variants and the paired difference between
// two groups.

#include <map>
#include <string>
#include <vector>

#include "npe/data/task_source.h"
#include "npe/training/evaluation.h"

namespace npe::cli {

// Per model, the results of each variant of a group (ERA5: one region's test blocks), in the
// order of the variants, so that groups can be compared variant by variant.
struct VariantResults {
  std::vector<std::string> models;  // in order of first appearance
  std::map<std::string, std::map<std::string, std::vector<EvalResult>>> by_group;  // group, model
};

// The summary over each group's variants: mean log-likelihood ± s.e. over variants, 90 %
// coverage, and between two groups the paired difference variant by variant (ERA5: unseen
// region minus training region on the same test blocks).
void print_group_summary(const VariantResults& r, const TaskSource& source);

}  // namespace npe::cli
