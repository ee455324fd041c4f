#include "maps/map_session.h"

#include <cmath>

#include <QJsonArray>

#include "npe/errors.h"

namespace npe::widgets {
namespace {

[[noreturn]] void fail(const QString& message) {
  throw DataError(("maps: " + message).toStdString());
}

}  // namespace

QJsonObject MapSession::to_json() const {
  QJsonArray cells;
  for (const auto& s : stations) cells.append(QJsonArray{s.y(), s.x()});
  QJsonObject section{{"stations", cells}, {"hour", hour},       {"shift", QJsonArray{north, east}},
                      {"layer", layer},    {"three_d", three_d}, {"models", models}};
  if (!suggestion_model.isEmpty()) {
    section["suggestion"] = QJsonObject{{"model", suggestion_model}, {"count", suggestion_count}};
  }
  section["observe_the_truth"] =
      EpisodeSessionPart{episode, episode_strategy, episode_plots_ll}.to_json();
  if (!data.isEmpty()) {
    section["data"] = data;
    if (!variable.isEmpty()) section["variable"] = variable;
  }
  return section;
}

MapSession MapSession::from_json(const QJsonObject& json) {
  MapSession s;
  s.data = json.value("data").toString();
  s.variable = json.value("variable").toString();
  for (const auto& v : json.value("stations").toArray()) {
    const auto pair = v.toArray();
    if (pair.size() != 2 || !pair[0].isDouble() || !pair[1].isDouble()) {
      fail("stations must be [row, column] pairs");
    }
    s.stations.emplace_back(pair[1].toInt(-1), pair[0].toInt(-1));
  }
  s.hour = json.value("hour").toInt(-1);
  const auto shift = json.value("shift").toArray();
  if (shift.size() != 2 || !shift[0].isDouble() || !shift[1].isDouble()) {
    fail("'shift' must be [north, east] in cells");
  }
  s.north = shift[0].toInt();
  s.east = shift[1].toInt();
  s.layer = json.value("layer").toString("truth");
  s.three_d = json.value("three_d").toBool(false);
  s.models = json.value("models").toObject();
  if (json.contains("suggestion")) {
    const auto suggestion = json.value("suggestion").toObject();
    s.suggestion_model = suggestion.value("model").toString();
    s.suggestion_count = suggestion.value("count").toInt(10);
    if (s.suggestion_count < 1 || s.suggestion_count > 50) {
      fail("the suggestion's 'count' must be 1 to 50");
    }
  }
  if (json.contains("observe_the_truth")) {
    auto part = EpisodeSessionPart::from_json(json.value("observe_the_truth").toObject());
    s.episode = std::move(part.episode);
    s.episode_strategy = part.strategy;
    s.episode_plots_ll = part.plots_ll;
  }
  return s;
}

void MapSession::check(int window, int64_t times) const {
  for (const auto& s : stations) {
    if (s.x() < 0 || s.y() < 0 || s.x() >= window || s.y() >= window) {
      fail(QString("stations must be [row, column] pairs within the %1 × %1 window").arg(window));
    }
  }
  if (hour < 0 || hour >= times) fail("'hour' is outside the data");
  if (!episode) return;
  auto check_cells = [window](const std::vector<QPointF>& cells) {
    for (const auto& c : cells) {
      if (c.x() != std::floor(c.x()) || c.y() != std::floor(c.y()) || c.x() < 0 || c.y() < 0 ||
          c.x() >= window || c.y() >= window) {
        fail(QString("the episode's cells must be [column, row] within the %1 × %1 window")
                 .arg(window));
      }
    }
  };
  check_cells(episode->start());
  for (const auto& run : episode->runs()) check_cells(run.observations);
}

}  // namespace npe::widgets
