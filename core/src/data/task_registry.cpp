#include "npe/data/task_registry.h"

#include <cmath>
#include <functional>
#include <map>

#include "npe/data/era5_tasks.h"
#include "npe/data/gp_tasks.h"
#include "npe/data/image_tasks.h"
#include "npe/data/picture_tasks.h"
#include "npe/data/series_tasks.h"
#include "npe/errors.h"

namespace npe {
namespace {

struct RegisteredTask {
  TaskInfo info;
  nlohmann::json configuration;  // the base configuration, in task_source_from_json's format
};

const std::vector<RegisteredTask>& registered_tasks() {
  static const std::vector<RegisteredTask> tasks = [] {
    ImageTaskConfig central;
    central.name = "tfmnist-central";
    central.train_max_translation = 4;
    ImageTaskConfig full;
    // Any regular latitude/longitude temperature grid: split at its middle latitude, without
    // the place features that only the shipped region's invariants file has.
    Era5TaskConfig gridded;
    gridded.name = "gridded";
    gridded.split_latitude = std::nan("");
    gridded.features.clear();
    return std::vector<RegisteredTask>{
        {{"gp1d", "1-D GP regression (SE, periodic, Matérn-5/2), paper Appendix F.1", "gp1d"},
         GpTaskConfig().to_json()},
        {{"tfmnist",
          "Translated Fashion-MNIST image completion, |h|,|v| <= 14 (paper F.2 protocol)",
          "tfmnist"},
         full.to_json()},
        {{"tfmnist-central",
          "Translated Fashion-MNIST, training translations |h|,|v| <= 4, tested anywhere on the "
          "canvas",
          "tfmnist"},
         central.to_json()},
        {{"era5",
          "ERA5 2 m temperature, British Isles, March 2019: trained on the south (days 1-20), "
          "tested on the unseen north (days 25-31); paper F.4 protocol scaled to this grid",
          "era5"},
         Era5TaskConfig().to_json()},
        {{"gridded",
          "Your own temperature grid (--data: a regular latitude/longitude NetCDF or GRIB file, "
          "any region, units and resolution): the southern half trains, the northern half "
          "tests, days in blocks as era5 (without place features)",
          "era5"},
         gridded.to_json()},
        {{"series",
          "Your own series (--data FILE: CSV, TSV or whitespace with a header; x numbers or "
          "date-times, one or more y columns, an optional series id): windows of the series, "
          "standardised, the end of each series held out (split=tail) or whole series "
          "(split=series)",
          "series"},
         SeriesTaskConfig().to_json()},
        {{"pictures",
          "Your own pictures (--data: a folder of PNG or JPEG files, an IDX file or CIFAR-10's "
          "binary batches), grey or colour, brought to one size and moved on a canvas twice "
          "their size (the paper's T-CIFAR10 protocol for 32 x 32 pictures); split by picture",
          "pictures"},
         PictureTaskConfig().to_json()},
    };
  }();
  return tasks;
}

// Task configurations by their "kind" field: how a stored configuration is rebuilt.
using Builder = std::function<std::unique_ptr<TaskSource>(const nlohmann::json&)>;
const std::map<std::string, Builder>& builders() {
  static const std::map<std::string, Builder> table = {
      {"gp1d",
       [](const nlohmann::json& j) {
         return std::make_unique<GpTaskGenerator>(GpTaskConfig::from_json(j));
       }},
      {"era5",
       [](const nlohmann::json& j) {
         return std::make_unique<Era5TaskSource>(Era5TaskConfig::from_json(j));
       }},
      {"series",
       [](const nlohmann::json& j) {
         return std::make_unique<SeriesTaskSource>(SeriesTaskConfig::from_json(j));
       }},
      {"pictures",
       [](const nlohmann::json& j) {
         return std::make_unique<PictureTaskSource>(PictureTaskConfig::from_json(j));
       }},
      {"image",
       [](const nlohmann::json& j) {
         return std::make_unique<ImageTaskSource>(ImageTaskConfig::from_json(j));
       }},
  };
  return table;
}

std::string known_names() {
  std::string list;
  for (const auto& t : registered_tasks()) list += (list.empty() ? "" : ", ") + t.info.name;
  return list;
}

}  // namespace

const std::vector<TaskInfo>& task_infos() {
  static const std::vector<TaskInfo> infos = [] {
    std::vector<TaskInfo> out;
    for (const auto& t : registered_tasks()) out.push_back(t.info);
    return out;
  }();
  return infos;
}

const TaskInfo& task_info(const std::string& name) {
  for (const auto& t : registered_tasks()) {
    if (t.info.name == name) return t.info;
  }
  throw ConfigError("unknown task '" + name + "' (known: " + known_names() + ")");
}

std::unique_ptr<TaskSource> make_task_source(const std::string& name,
                                             const nlohmann::json& overrides) {
  task_info(name);
  for (const auto& t : registered_tasks()) {
    if (t.info.name != name) continue;
    auto configuration = t.configuration;
    if (!overrides.is_null()) {
      if (!overrides.is_object()) throw ConfigError("task overrides must be a JSON object");
      for (const auto& [key, value] : overrides.items()) {
        if (!configuration.contains(key) || key == "kind") {
          throw ConfigError("task '" + name + "' has no setting '" + key + "'");
        }
        configuration[key] = value;
      }
    }
    return task_source_from_json(configuration);
  }
  throw ConfigError("unknown task '" + name + "'");
}

std::unique_ptr<TaskSource> task_source_from_json(const nlohmann::json& json) {
  const auto kind = json.is_object() ? json.value("kind", std::string()) : std::string();
  auto found = builders().find(kind);
  if (found == builders().end()) {
    throw ConfigError("unknown task configuration kind '" + kind + "'");
  }
  return found->second(json);
}

}  // namespace npe
