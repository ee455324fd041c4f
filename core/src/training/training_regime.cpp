#include "npe/training/training_regime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace npe {
namespace {

std::string format(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// A gridded (era5) task: the counts of Era5TaskSource::sample (fractions of the window's cells
// at every time), and the side of the split latitude that trained (the latitude coordinate is
// (latitude - split) / unit, so the north is positive). Throws nlohmann's exceptions for a
// task without these fields.
TrainingRegime gridded_regime(const nlohmann::json& task, bool translation_equivariant) {
  TrainingRegime regime;
  regime.translation_equivariant = translation_equivariant;
  const auto window = task.at("window").get<int64_t>();
  const auto n = window * window * task.at("time_steps").get<int64_t>();
  regime.min_context =
      static_cast<int64_t>(std::ceil(task.at("min_context_fraction").get<double>() * double(n)));
  regime.max_context =
      std::max(regime.min_context,
               static_cast<int64_t>(task.at("max_context_fraction").get<double>() * double(n)));
  const auto& split = task.at("split_latitude");
  const bool north_tests = task.value("test_region", std::string("north")) == "north";
  const double inf = std::numeric_limits<double>::infinity();
  if (split.is_number()) {
    regime.context_low = north_tests ? -inf : 0.0;
    regime.context_high = north_tests ? 0.0 : inf;
    regime.beyond = std::string("stations ") + (north_tests ? "north" : "south") + " of " +
                    format(split.get<double>()) + "° N, where it did not train";
  } else {
    regime.context_low = -inf;  // a split nobody recorded: no side can be named
    regime.context_high = inf;
  }
  regime.known = true;
  return regime;
}

// A translated-picture task (image_tasks.cpp: sample_canvas_tasks): 1 % to a third of the
// canvas's pixels as context, pictures moved by at most train_max_translation each way. A
// canvas of 0 (own pictures: twice their size, known once they are read) leaves the counts
// unknown.
TrainingRegime canvas_regime(const nlohmann::json& task, bool translation_equivariant) {
  TrainingRegime regime;
  regime.translation_equivariant = translation_equivariant;
  regime.context_low = -std::numeric_limits<double>::infinity();
  regime.context_high = std::numeric_limits<double>::infinity();
  regime.max_shift = double(task.at("train_max_translation").get<int64_t>());
  const auto canvas = task.at("canvas").get<int64_t>();
  const double n = double(canvas * canvas);
  regime.min_context =
      static_cast<int64_t>(std::ceil(task.at("min_context_fraction").get<double>() * n));
  regime.max_context =
      canvas > 0 ? std::max(regime.min_context,
                            static_cast<int64_t>(task.at("max_context_fraction").get<double>() * n))
                 : std::numeric_limits<int64_t>::max();
  regime.known = true;
  return regime;
}

}  // namespace

TrainingRegime training_regime(const nlohmann::json& task, bool translation_equivariant) {
  TrainingRegime regime;
  regime.translation_equivariant = translation_equivariant;
  if (!task.is_object()) return regime;
  const auto kind = task.value("kind", std::string());
  try {
    if (kind == "gp1d" && task.value("dim_x", 1) == 1) {
      regime.context_low = task.at("context_low").get<double>();
      regime.context_high = task.at("context_high").get<double>();
    } else if (kind == "series") {
      // A window lies on [-2, 2] (series_tasks.h: (x - centre) / (window / 4)).
      const double window = task.at("window").get<double>();
      const double scale = task.at("x_scale").get<double>();
      if (!(window > 0.0 && scale > 0.0)) return regime;
      regime.context_low = -0.5 * window / scale;
      regime.context_high = 0.5 * window / scale;
    } else if (kind == "era5") {
      return gridded_regime(task, translation_equivariant);
    } else if (kind == "image" || kind == "pictures") {
      return canvas_regime(task, translation_equivariant);
    } else {
      return regime;
    }
    regime.min_context = task.at("min_num_context").get<int64_t>();
    regime.max_context = task.at("max_num_context").get<int64_t>();
  } catch (const nlohmann::json::exception&) {
    return TrainingRegime{false, translation_equivariant};  // a task of an older layout
  }
  regime.known = true;
  return regime;
}

std::vector<std::string> regime_warnings(const TrainingRegime& regime,
                                         const std::vector<double>& context_x,
                                         const std::vector<double>& shift) {
  std::vector<std::string> warnings;
  if (!regime.known) return warnings;
  const auto n = static_cast<int64_t>(context_x.size());
  if (n > regime.max_context) {
    warnings.push_back(std::to_string(n) + " context points > " +
                       std::to_string(regime.max_context));
  } else if (n < regime.min_context) {
    warnings.push_back(std::to_string(n) + " context points < " +
                       std::to_string(regime.min_context));
  }
  if (!regime.translation_equivariant && !context_x.empty()) {
    const auto [low, high] = std::minmax_element(context_x.begin(), context_x.end());
    if (*low < regime.context_low || *high > regime.context_high) {
      warnings.push_back(!regime.beyond.empty() ? regime.beyond
                                                : "context beyond [" + format(regime.context_low) +
                                                      ", " + format(regime.context_high) + "]");
    }
  }
  double largest = 0.0;
  for (double v : shift) largest = std::max(largest, std::abs(v));
  if (!regime.translation_equivariant && largest > regime.max_shift) {
    warnings.push_back("Δ beyond the training translations: |Δ| = " + format(largest) + " > " +
                       format(regime.max_shift));
  }
  return warnings;
}

}  // namespace npe
