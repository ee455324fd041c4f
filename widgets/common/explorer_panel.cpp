#include "common/explorer_panel.h"

#include <algorithm>

#include <QEvent>
#include <QHBoxLayout>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QTimer>

#include "common/explorer_controller.h"
#include "common/model_list.h"
#include "common/prediction_service.h"
#include "common/session_file.h"
#include "npe/errors.h"
#include "npe/models/checkpoint.h"

namespace npe::widgets {

void ExplorerPanel::setActive(bool active) {
  m_active = active;
  if (m_controller) m_controller->service()->setPaused(!active);
}

void ExplorerPanel::setController(ExplorerController* controller) {
  m_controller = controller;
  m_controller->service()->setPaused(!m_active);
}

bool ExplorerPanel::acceptsCheckpoint(const CheckpointMetadata& metadata) const {
  return m_controller && m_controller->accepts(metadata);
}

void ExplorerPanel::openCheckpoint(const QString& path) {
  if (!m_controller) throw CheckpointError("this tab shows no models");
  m_controller->openCheckpoint(path);
}

QStringList ExplorerPanel::shownModelNames() const {
  return m_controller ? m_controller->models()->enabledNames() : QStringList();
}

const std::vector<std::pair<QString, double>>& ExplorerPanel::lastRoundTimes() const {
  static const std::vector<std::pair<QString, double>> none;
  return m_controller ? m_controller->lastRoundTimes() : none;
}

const std::vector<std::pair<QString, double>>& ExplorerPanel::lastRoundFlops() const {
  static const std::vector<std::pair<QString, double>> none;
  return m_controller ? m_controller->lastRoundFlops() : none;
}

std::chrono::steady_clock::time_point ExplorerPanel::lastRoundStarted() const {
  return m_controller ? m_controller->lastRoundStarted() : std::chrono::steady_clock::time_point{};
}

std::chrono::steady_clock::time_point ExplorerPanel::lastDeliveryStarted() const {
  return m_controller ? m_controller->lastDeliveryStarted()
                      : std::chrono::steady_clock::time_point{};
}

double ExplorerPanel::lastRoundMilliseconds() const {
  return m_controller ? m_controller->lastRoundMilliseconds() : 0.0;
}

void ExplorerPanel::reportErrors(const QString& failure, const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    const auto why = QString::fromUtf8(e.what());
    Q_EMIT statusMessage(failure.isEmpty() ? why : failure + ": " + why);
  }
}

namespace {

// Keeps a scroll area at least as wide as its widget's minimum beside a vertical scroll bar.
class ControlsWidthFilter final : public QObject {
 public:
  ControlsWidthFilter(QScrollArea* scroll, int least)
      : QObject(scroll), m_scroll(scroll), m_least(least) {}
  void apply(QWidget* controls) {
    const int needed = controls->minimumSizeHint().width() +
                       m_scroll->verticalScrollBar()->sizeHint().width() +
                       2 * m_scroll->frameWidth();
    const int width = std::max(m_least, needed);
    if (width > m_scroll->minimumWidth()) m_scroll->setMinimumWidth(width);
  }
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() == QEvent::LayoutRequest) {
      if (auto* controls = qobject_cast<QWidget*>(watched)) apply(controls);
    }
    return false;
  }

 private:
  QScrollArea* m_scroll;
  int m_least;
};

}  // namespace

void ExplorerPanel::layOutViewAndControls(QWidget* view, QWidget* controls, int controls_width,
                                          QWidget* results) {
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(controls);
  scroll->setWidgetResizable(true);
  // At least as wide as the controls beside a vertical scroll bar: otherwise a horizontal scroll
  // bar covers the panel's last row and its right edge is cut (the functions tab at 1400 px).
  // Again whenever the controls' layout changes: the metrics table widens when its first
  // figures or a model's note arrive.
  auto* fit = new ControlsWidthFilter(scroll, controls_width);
  controls->installEventFilter(fit);
  fit->apply(controls);
  auto* splitter = new QSplitter(this);
  splitter->addWidget(view);
  splitter->setStretchFactor(0, 3);
  if (results) {
    splitter->addWidget(results);
    splitter->setStretchFactor(1, 1);
  }
  splitter->addWidget(scroll);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(splitter);
}

void ExplorerPanel::scrollControlsTo(QWidget* group) {
  if (auto* scroll = findChild<QScrollArea*>()) {
    QTimer::singleShot(0, scroll, [scroll, group] { scroll->ensureWidgetVisible(group, 0, 0); });
  }
}

std::string prediction_column(const QString& model_name, const std::string& what) {
  std::string column;
  for (const QChar c : model_name) {
    const bool kept = c.unicode() < 128 && (c.isLetterOrNumber() || c == '-' || c == '.');
    if (kept) {
      column += char(c.unicode());
    } else if (!column.empty() && column.back() != '_') {
      column += '_';
    }
  }
  if (!column.empty() && column.back() != '_') column += '_';
  return column + what;
}

void ExplorerPanel::saveSession(const QString& path) const {
  SessionFile file;
  file.current_tab = panelId();
  file.tabs[panelId()] = saveSection();
  write_session_file(path, file);
}

void ExplorerPanel::loadSession(const QString& path) {
  const auto file = read_session_file(path);
  if (!file.tabs.contains(panelId())) {
    throw DataError(("'" + path + "' has no " + title() + " section").toStdString());
  }
  try {
    restoreSection(file.tabs.value(panelId()).toObject());
  } catch (const DataError& e) {
    throw DataError(("'" + path + "': ").toStdString() + e.what());
  }
}

void ExplorerPanel::exportPredictions(const QString& path) const {
  const auto table = predictionTable();
  if (table.columns.empty()) {
    throw DataError("no predictions to export yet: wait until the models have drawn");
  }
  write_point_table(path.toStdString(), table, firstColumnLabels(table));
}

bool checkpoint_fits_tab(const CheckpointMetadata& metadata,
                         const std::vector<std::string>& task_kinds, int64_t dim_x,
                         const std::vector<int64_t>& dim_y) {
  if (metadata.model.dim_coordinates() != dim_x ||
      std::find(dim_y.begin(), dim_y.end(), metadata.model.dim_y) == dim_y.end()) {
    return false;
  }
  const std::string kind =
      metadata.task.is_object() ? metadata.task.value("kind", std::string()) : std::string();
  return kind.empty() || std::find(task_kinds.begin(), task_kinds.end(), kind) != task_kinds.end();
}

}  // namespace npe::widgets
