#include "common/truth_episode.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <QJsonArray>
#include <QObject>

#include "npe/errors.h"

namespace npe::widgets {
namespace {

[[noreturn]] void fail_episode(const QString& message) {
  throw DataError(("session: episode: " + message).toStdString());
}

/// Two uniforms in (0, 1) for draw `index` of a stream: the generator is seeded per draw, so a
/// draw does not depend on how many came before it (a replay that observes in another order
/// still gets the same noise for its k-th observation). mt19937_64's output is fixed by the
/// standard, and the conversion below too, so an episode replays alike on every build.
std::pair<double, double> uniforms(uint64_t seed, uint64_t stream, int index) {
  std::seed_seq sequence{uint32_t(seed), uint32_t(seed >> 32), uint32_t(stream), uint32_t(index)};
  std::mt19937_64 generator(sequence);
  const auto unit = [&] { return (double(generator() >> 11) + 0.5) * 0x1.0p-53; };
  const double a = unit();
  return {a, unit()};
}

constexpr double kPi = 3.14159265358979323846;
constexpr uint64_t kNoiseStream = 1;
constexpr uint64_t kPlaceStream = 2;

double finite(const QJsonValue& value, const QString& what) {
  if (!value.isDouble() || !std::isfinite(value.toDouble()))
    fail_episode(what + " must be a number");
  return value.toDouble();
}

QJsonArray points_json(const std::vector<QPointF>& points) {
  QJsonArray array;
  for (const auto& p : points) array.append(QJsonArray{p.x(), p.y()});
  return array;
}

std::vector<QPointF> points_from_json(const QJsonValue& value, const QString& what) {
  if (!value.isArray()) fail_episode(what + " must be a list of [x, y]");
  std::vector<QPointF> points;
  for (const auto& item : value.toArray()) {
    const auto pair = item.toArray();
    if (pair.size() != 2) fail_episode(what + " must be a list of [x, y]");
    points.emplace_back(finite(pair[0], what), finite(pair[1], what));
  }
  return points;
}

// NaN (no score) is written as null: JSON has no NaN.
QJsonValue number_or_null(double value) {
  return std::isfinite(value) ? QJsonValue(value) : QJsonValue();
}
double number_from_json(const QJsonValue& value) {
  return value.isDouble() ? value.toDouble() : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

QString strategy_id(ObserveStrategy strategy) {
  switch (strategy) {
    case ObserveStrategy::suggestion:
      return "suggestion";
    case ObserveStrategy::gp_uncertainty:
      return "gp-uncertainty";
    case ObserveStrategy::random_place:
      return "random";
    case ObserveStrategy::click:
      return "click";
  }
  return {};
}

ObserveStrategy strategy_from_id(const QString& id) {
  for (const auto strategy : kObserveStrategies) {
    if (strategy_id(strategy) == id) return strategy;
  }
  fail_episode(
      QString("unknown strategy '%1' (suggestion, gp-uncertainty, random or click)").arg(id));
}

QString strategy_name(ObserveStrategy strategy) {
  switch (strategy) {
    case ObserveStrategy::suggestion:
      return QObject::tr("Model's suggestion");
    case ObserveStrategy::gp_uncertainty:
      return QObject::tr("GP uncertainty sampling");
    case ObserveStrategy::random_place:
      return QObject::tr("Random place");
    case ObserveStrategy::click:
      return QObject::tr("Your click");
  }
  return {};
}

TruthEpisode::TruthEpisode(std::vector<QPointF> start, uint64_t seed, double noise_std)
    : m_start(std::move(start)), m_seed(seed), m_noise_std(noise_std) {}

double TruthEpisode::noise(int index) const {
  // Box–Muller: a standard normal from two uniforms.
  const auto [a, b] = uniforms(m_seed, kNoiseStream, index);
  return m_noise_std * std::sqrt(-2.0 * std::log(a)) * std::cos(2.0 * kPi * b);
}

double TruthEpisode::randomPlace(int index, double low, double high) const {
  return low + (high - low) * uniforms(m_seed, kPlaceStream, index).first;
}

const EpisodeRun* TruthEpisode::run(ObserveStrategy strategy) const {
  for (const auto& run : m_runs) {
    if (run.strategy == strategy) return &run;
  }
  return nullptr;
}

EpisodeRun& TruthEpisode::runOf(ObserveStrategy strategy) {
  for (auto& run : m_runs) {
    if (run.strategy == strategy) return run;
  }
  m_runs.push_back(EpisodeRun{strategy, {}, {}});
  return m_runs.back();
}

int TruthEpisode::observed(ObserveStrategy strategy) const {
  const auto* r = run(strategy);
  return r ? int(r->observations.size()) : 0;
}

QPointF TruthEpisode::observe(ObserveStrategy strategy, double base_x, double truth_value) {
  auto& r = runOf(strategy);
  const QPointF point(base_x, truth_value + noise(int(r.observations.size())));
  r.observations.push_back(point);
  return point;
}

void TruthEpisode::observePlace(ObserveStrategy strategy, QPointF place) {
  runOf(strategy).observations.push_back(place);
}

void TruthEpisode::restart(ObserveStrategy strategy) {
  m_runs.erase(std::remove_if(m_runs.begin(), m_runs.end(),
                              [strategy](const EpisodeRun& r) { return r.strategy == strategy; }),
               m_runs.end());
}

void TruthEpisode::record(ObserveStrategy strategy, int count, const QString& model,
                          EpisodeScore score) {
  if (count < 0) return;
  auto& scores = runOf(strategy).scores[model];
  if (int(scores.size()) <= count) scores.resize(size_t(count) + 1);
  scores[size_t(count)] = score;
}

QJsonObject TruthEpisode::to_json() const {
  QJsonArray runs;
  for (const auto& run : m_runs) {
    QJsonObject scores;
    for (const auto& [model, list] : run.scores) {
      QJsonArray rmse, ll;
      for (const auto& s : list) {
        rmse.append(number_or_null(s.rmse));
        ll.append(number_or_null(s.ll));
      }
      scores[model] = QJsonObject{{"rmse", rmse}, {"ll", ll}};
    }
    runs.append(QJsonObject{{"strategy", strategy_id(run.strategy)},
                            {"observations", points_json(run.observations)},
                            {"scores", scores}});
  }
  return {{"start", points_json(m_start)},
          {"seed", QString::number(m_seed)},
          {"noise_std", m_noise_std},
          {"runs", runs}};
}

TruthEpisode TruthEpisode::from_json(const QJsonObject& json) {
  bool ok = true;
  const auto seed = json.value("seed").toString().toULongLong(&ok);
  if (!ok) fail_episode("'seed' must be an unsigned integer");
  const double noise_std = finite(json.value("noise_std"), "'noise_std'");
  if (noise_std < 0) fail_episode("'noise_std' must not be negative");
  TruthEpisode episode(points_from_json(json.value("start"), "'start'"), seed, noise_std);
  for (const auto& item : json.value("runs").toArray()) {
    const auto object = item.toObject();
    const auto strategy = strategy_from_id(object.value("strategy").toString());
    if (episode.run(strategy)) fail_episode("two runs of " + strategy_id(strategy));
    auto& run = episode.runOf(strategy);
    run.observations = points_from_json(object.value("observations"), "a run's 'observations'");
    const auto scores = object.value("scores").toObject();
    for (auto it = scores.begin(); it != scores.end(); ++it) {
      const auto rmse = it->toObject().value("rmse").toArray();
      const auto ll = it->toObject().value("ll").toArray();
      if (rmse.size() != ll.size()) fail_episode("the scores of " + it.key() + " differ in length");
      auto& list = run.scores[it.key()];
      for (qsizetype i = 0; i < rmse.size(); ++i) {
        list.push_back({number_from_json(rmse[i]), number_from_json(ll[i])});
      }
    }
  }
  return episode;
}

QJsonObject EpisodeSessionPart::to_json() const {
  QJsonObject json{{"strategy", strategy}, {"plot", plots_ll ? "ll" : "rmse"}};
  if (episode) json["episode"] = episode->to_json();
  return json;
}

EpisodeSessionPart EpisodeSessionPart::from_json(const QJsonObject& json) {
  EpisodeSessionPart part;
  part.strategy = json.value("strategy").toString("gp-uncertainty");
  strategy_from_id(part.strategy);  // throws for an unknown one
  part.plots_ll = json.value("plot").toString("rmse") == "ll";
  if (json.contains("episode"))
    part.episode = TruthEpisode::from_json(json.value("episode").toObject());
  return part;
}

}  // namespace npe::widgets
