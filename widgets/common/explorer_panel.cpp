#include "common/explorer_panel.h"

#include <QHBoxLayout>
#include <QScrollArea>
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

void ExplorerPanel::layOutViewAndControls(QWidget* view, QWidget* controls, int controls_width) {
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(controls);
  scroll->setWidgetResizable(true);
  scroll->setMinimumWidth(controls_width);
  auto* splitter = new QSplitter(this);
  splitter->addWidget(view);
  splitter->addWidget(scroll);
  splitter->setStretchFactor(0, 1);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(splitter);
}

}  // namespace npe::widgets
