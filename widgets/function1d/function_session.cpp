#include "function_session.h"

#include <cmath>

#include <QJsonArray>

#include "npe/errors.h"

namespace npe::widgets {
namespace {

[[noreturn]] void fail(const QString& message) {
  throw DataError(("session: " + message).toStdString());
}

double finite_number(const QJsonObject& object, const char* key, double fallback) {
  if (!object.contains(key)) return fallback;
  const auto value = object.value(key);
  if (!value.isDouble() || !std::isfinite(value.toDouble())) {
    fail(QString("'%1' must be a finite number").arg(key));
  }
  return value.toDouble();
}

}  // namespace

QJsonObject Session::to_json() const {
  QJsonArray points;
  for (const auto& p : context) points.append(QJsonArray{p.x(), p.y()});
  QJsonObject json{
      {"ground_truth", QJsonObject{{"mode", has_truth ? "gp" : "free-hand"},
                                   {"kernel", QString::fromStdString(kernel_name(truth.kernel))},
                                   {"lengthscale", truth.lengthscale},
                                   {"noise_std", truth.noise_std},
                                   {"seed", QString::number(truth.seed)},
                                   {"show", show_truth}}},
      {"context", points},
      {"shift", shift},
      {"models", QJsonObject{{"enabled", QJsonArray::fromStringList(enabled_models)},
                             {"checkpoints", QJsonArray::fromStringList(checkpoints)}}},
  };
  if (!series_model.isEmpty()) {
    auto truth_json = json["ground_truth"].toObject();
    truth_json["mode"] = "series";
    truth_json["series"] = QJsonObject{
        {"model", series_model}, {"split", series_split}, {"window", double(series_window + 1)}};
    json["ground_truth"] = truth_json;
  }
  if (samples > 0 || !correlation_model.isEmpty()) {
    json["joint"] = QJsonObject{{"samples", samples}, {"correlation_model", correlation_model}};
  }
  json["bands"] = bands;
  if (!suggestion_model.isEmpty()) {
    json["suggestion"] = QJsonObject{{"model", suggestion_model}, {"score", suggestion_score}};
  }
  json["observe_the_truth"] =
      EpisodeSessionPart{episode, episode_strategy, episode_plots_ll}.to_json();
  if (has_view) {
    json["view"] = QJsonObject{{"x", QJsonArray{view_x_low, view_x_high}},
                               {"y", QJsonArray{view_y_low, view_y_high}}};
  }
  return json;
}

Session Session::from_json(const QJsonObject& json) {
  Session s;
  const auto truth = json.value("ground_truth").toObject();
  s.has_truth = truth.value("mode").toString("gp") != "free-hand";
  try {
    s.truth.kernel = kernel_kind_from_name(truth.value("kernel").toString("se").toStdString());
  } catch (const Error& e) {
    fail(e.what());
  }
  s.truth.lengthscale = finite_number(truth, "lengthscale", 1.0);
  s.truth.noise_std = finite_number(truth, "noise_std", 0.2);
  bool ok = true;
  s.truth.seed = truth.value("seed").toString("1").toULongLong(&ok);
  if (!ok) fail("'seed' must be an unsigned integer");
  if (!(s.truth.lengthscale > 0) || !(s.truth.noise_std >= 0)) {
    fail("lengthscale must be positive and noise non-negative");
  }
  s.show_truth = truth.value("show").toBool(true);
  if (truth.value("mode").toString() == "series") {
    const auto series = truth.value("series").toObject();
    s.series_model = series.value("model").toString();
    s.series_split = series.value("split").toString("test");
    const double window = finite_number(series, "window", 1.0);
    if (s.series_model.isEmpty()) fail("series mode needs the model whose data it shows");
    if (s.series_split != "test" && s.series_split != "validation" &&
        s.series_split != "training") {
      fail("the series' 'split' must be \"test\", \"validation\" or \"training\"");
    }
    if (window < 1 || window > 9e15 || window != std::floor(window)) {
      fail("the series' 'window' must be a whole number from 1");
    }
    s.series_window = static_cast<qint64>(window) - 1;
  }
  for (const auto& item : json.value("context").toArray()) {
    const auto pair = item.toArray();
    if (pair.size() != 2 || !pair[0].isDouble() || !pair[1].isDouble() ||
        !std::isfinite(pair[0].toDouble()) || !std::isfinite(pair[1].toDouble())) {
      fail("every context point must be a pair of finite numbers [x, y]");
    }
    s.context.emplace_back(pair[0].toDouble(), pair[1].toDouble());
  }
  s.shift = finite_number(json, "shift", 0.0);
  const auto models = json.value("models").toObject();
  for (const auto& v : models.value("enabled").toArray()) s.enabled_models << v.toString();
  for (const auto& v : models.value("checkpoints").toArray()) s.checkpoints << v.toString();
  if (json.contains("joint")) {
    const auto joint = json.value("joint").toObject();
    const double samples = finite_number(joint, "samples", 0.0);
    if (samples < 0 || samples > 50 || samples != std::floor(samples)) {
      fail("'samples' must be a whole number from 0 to 50");
    }
    s.samples = int(samples);
    s.correlation_model = joint.value("correlation_model").toString();
  }
  s.bands = json.value("bands").toString("focused");
  if (s.bands != "focused" && s.bands != "all" && s.bands != "none") {
    fail("'bands' must be \"focused\", \"all\" or \"none\"");
  }
  if (json.contains("suggestion")) {
    const auto suggestion = json.value("suggestion").toObject();
    s.suggestion_model = suggestion.value("model").toString();
    s.suggestion_score = suggestion.value("score").toString("variance_reduction");
    if (s.suggestion_score != "variance_reduction" && s.suggestion_score != "predictive_std") {
      fail("the suggestion's 'score' must be \"variance_reduction\" or \"predictive_std\"");
    }
  }
  if (json.contains("observe_the_truth")) {
    auto part = EpisodeSessionPart::from_json(json.value("observe_the_truth").toObject());
    s.episode = std::move(part.episode);
    s.episode_strategy = part.strategy;
    s.episode_plots_ll = part.plots_ll;
  }
  if (json.contains("view")) {
    const auto view = json.value("view").toObject();
    const auto x = view.value("x").toArray(), y = view.value("y").toArray();
    if (x.size() != 2 || y.size() != 2) fail("'view' needs x and y ranges");
    s.has_view = true;
    s.view_x_low = x[0].toDouble();
    s.view_x_high = x[1].toDouble();
    s.view_y_low = y[0].toDouble();
    s.view_y_high = y[1].toDouble();
    if (!(s.view_x_high > s.view_x_low) || !(s.view_y_high > s.view_y_low)) {
      fail("'view' ranges must be increasing");
    }
  }
  return s;
}

}  // namespace npe::widgets
