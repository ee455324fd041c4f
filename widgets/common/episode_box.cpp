#include "common/episode_box.h"

#include <algorithm>
#include <cmath>

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>

#include "common/custom_plot.h"
#include "common/model_list.h"

namespace npe::widgets {
namespace {

Qt::PenStyle strategy_pen(ObserveStrategy strategy) {
  switch (strategy) {
    case ObserveStrategy::suggestion:
      return Qt::SolidLine;
    case ObserveStrategy::gp_uncertainty:
      return Qt::DashLine;
    case ObserveStrategy::random_place:
      return Qt::DotLine;
    case ObserveStrategy::click:
      return Qt::DashDotLine;
  }
  return Qt::SolidLine;
}

}  // namespace

EpisodeBox::EpisodeBox(const EpisodeWording& wording, QWidget* parent)
    : QGroupBox(tr("Observe the truth"), parent), m_rmse_unit(wording.rmse_unit) {
  setToolTip(wording.box_tip);
  auto* form = new QFormLayout(this);
  m_strategy = new QComboBox(this);
  m_strategy->setObjectName("episode_strategy");
  for (size_t i = 0; i < kObserveStrategies.size(); ++i) {
    m_strategy->addItem(strategy_name(kObserveStrategies[i]), strategy_id(kObserveStrategies[i]));
    m_strategy->setItemData(int(i), wording.strategy_tips[i], Qt::ToolTipRole);
  }
  m_strategy->setCurrentIndex(1);  // GP uncertainty sampling: works with no other setting
  form->addRow(tr("Where"), m_strategy);

  m_observe = new QPushButton(tr("Observe"), this);
  m_observe->setObjectName("episode_observe");
  m_observe->setToolTip(
      tr("One observation of the hidden truth (starts an episode: the truth "
         "is hidden, the context kept as its start)"));
  m_observe_five = new QPushButton(tr("×5"), this);
  m_observe_five->setToolTip(tr("Five observations, one prediction round apart"));
  m_replay = new QPushButton(tr("Replay"), this);
  m_replay->setToolTip(
      tr("Back to the episode's start context: the strategy chosen now observes again from "
         "there (its earlier run is replaced)"));
  m_end = new QPushButton(tr("End"), this);
  m_end->setToolTip(tr("End the episode and show the truth again (the curves are cleared)"));
  auto* buttons = new QHBoxLayout;
  for (auto* button : {m_observe, m_observe_five, m_replay, m_end}) buttons->addWidget(button);
  form->addRow(buttons);

  m_measure = new QComboBox(this);
  m_measure->addItem(tr("Held-out RMSE (lower is better)"));
  m_measure->addItem(tr("Held-out log-likelihood (higher is better)"));
  form->addRow(tr("Plot"), m_measure);

  m_curves = new QCustomPlot(this);
  m_curves->setObjectName("episode_curves");
  m_curves->setMinimumHeight(250);
  m_curves->setInteractions({});
  m_curves->xAxis->setLabel(tr("observations"));
  auto whole = QSharedPointer<QCPAxisTickerFixed>(new QCPAxisTickerFixed);
  whole->setTickStep(1.0);  // observations are counted: 1, 2, 5, 10, … apart as they grow
  whole->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
  m_curves->xAxis->setTicker(whole);
  m_curves->legend->setVisible(true);
  auto font = m_curves->legend->font();
  font.setPointSizeF(font.pointSizeF() * 0.8);
  m_curves->legend->setFont(font);
  m_curves->legend->setRowSpacing(-3);
  // Under the axes, two columns: inside them it hid the curves it explains.
  auto* legend_row = new QCPLayoutGrid;
  m_curves->plotLayout()->addElement(1, 0, legend_row);
  legend_row->setMargins(QMargins(4, 0, 4, 4));
  legend_row->addElement(0, 0, m_curves->legend);
  m_curves->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  m_curves->legend->setWrap(2);
  m_curves->legend->setBorderPen(Qt::NoPen);
  m_curves->plotLayout()->setRowStretchFactor(1, 0.001);
  form->addRow(m_curves);
  m_status = new QLabel(this);
  m_status->setWordWrap(true);
  form->addRow(m_status);
  setRunning(false);

  connect(m_observe, &QPushButton::clicked, this, [this] { Q_EMIT observeRequested(1); });
  connect(m_observe_five, &QPushButton::clicked, this, [this] { Q_EMIT observeRequested(5); });
  connect(m_replay, &QPushButton::clicked, this, &EpisodeBox::replayRequested);
  connect(m_end, &QPushButton::clicked, this, &EpisodeBox::endRequested);
  connect(m_strategy, qOverload<int>(&QComboBox::currentIndexChanged), this,
          &EpisodeBox::strategyChanged);
  connect(m_measure, qOverload<int>(&QComboBox::currentIndexChanged), this,
          &EpisodeBox::strategyChanged);
}

ObserveStrategy EpisodeBox::strategy() const {
  return strategy_from_id(m_strategy->currentData().toString());
}

void EpisodeBox::setStrategy(ObserveStrategy strategy) {
  m_strategy->setCurrentIndex(m_strategy->findData(strategy_id(strategy)));
}

bool EpisodeBox::showsLogLikelihood() const {
  return m_measure->currentIndex() == 1;
}

void EpisodeBox::setShowsLogLikelihood(bool ll) {
  m_measure->setCurrentIndex(ll ? 1 : 0);
}

void EpisodeBox::showEpisode(const TruthEpisode* episode, const ModelList& models) {
  m_curves->clearGraphs();
  m_curves->legend->clearItems();
  if (!episode) {
    m_curves->replot();
    return;
  }
  const bool ll = showsLogLikelihood();
  m_curves->yAxis->setLabel(ll                      ? tr("held-out LL")
                            : m_rmse_unit.isEmpty() ? tr("held-out RMSE")
                                                    : tr("held-out RMSE (%1)").arg(m_rmse_unit));
  // The legend names each strategy once (its line style, in grey) and each model once (its
  // colour): strategies × models entries would fill the plot.
  std::vector<QString> models_drawn;
  double max_count = 1.0;
  for (const auto& run : episode->runs()) {
    bool drawn = false;
    for (const auto& [id, scores] : run.scores) {
      const auto* entry = models.find(id);
      if (!entry || !entry->enabled) continue;
      QVector<double> x, y;
      for (size_t n = 0; n < scores.size(); ++n) {
        const double value = ll ? scores[n].ll : scores[n].rmse;
        if (!std::isfinite(value)) continue;
        x.push_back(double(n));
        y.push_back(value);
      }
      if (x.isEmpty()) continue;
      max_count = std::max(max_count, x.back());
      auto* graph = m_curves->addGraph();
      graph->setPen(QPen(entry->colour, 1.6, strategy_pen(run.strategy)));
      graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, entry->colour, 4));
      graph->setData(x, y, true);
      graph->removeFromLegend();
      drawn = true;
      if (std::find(models_drawn.begin(), models_drawn.end(), id) == models_drawn.end()) {
        models_drawn.push_back(id);
      }
    }
    if (drawn) {
      auto* key = m_curves->addGraph();
      key->setPen(QPen(Qt::darkGray, 1.6, strategy_pen(run.strategy)));
      key->setName(strategy_name(run.strategy));
    }
  }
  for (const auto& id : models_drawn) {
    const auto* entry = models.find(id);
    auto* key = m_curves->addGraph();
    key->setPen(QPen(entry->colour, 3.0));
    key->setName(entry->name);
  }
  m_curves->rescaleAxes(true);
  m_curves->xAxis->setRange(0.0, max_count);
  const auto y = m_curves->yAxis->range();
  const double pad = std::max(0.05 * y.size(), 1e-3);
  m_curves->yAxis->setRange(y.lower - pad, y.upper + pad);
  m_curves->replot();
}

void EpisodeBox::setStatus(const QString& text) {
  m_status->setText(text);
}

void EpisodeBox::setObservable(bool observable, const QString& why) {
  m_observe->setEnabled(observable);
  m_observe_five->setEnabled(observable);
  if (!observable) m_status->setText(why);
}

void EpisodeBox::setRunning(bool running) {
  m_replay->setEnabled(running);
  m_end->setEnabled(running);
}

}  // namespace npe::widgets
