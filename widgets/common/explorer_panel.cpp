#include "common/explorer_panel.h"

#include <algorithm>

#include <QHBoxLayout>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>

#include "common/prediction_service.h"
#include "npe/errors.h"

namespace npe::widgets {

void ExplorerPanel::setActive(bool active) {
  m_active = active;
  if (m_service) m_service->setPaused(!active);
}

void ExplorerPanel::setPredictionService(PredictionService* service) {
  m_service = service;
  if (m_service) m_service->setPaused(!m_active);
}

void ExplorerPanel::reportErrors(const QString& failure, const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    const auto why = QString::fromUtf8(e.what());
    Q_EMIT statusMessage(failure.isEmpty() ? why : failure + ": " + why);
  }
}

void ExplorerPanel::layOutViewAndControls(QWidget* view, QWidget* controls, int controls_width,
                                          QWidget* results) {
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(controls);
  scroll->setWidgetResizable(true);
  // At least as wide as the controls beside a vertical scroll bar: otherwise a horizontal scroll
  // bar covers the panel's last row and its right edge is cut (the functions tab at 1400 px).
  const int needed = controls->minimumSizeHint().width() +
                     scroll->verticalScrollBar()->sizeHint().width() + 2 * scroll->frameWidth();
  scroll->setMinimumWidth(std::max(controls_width, needed));
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

}  // namespace npe::widgets
