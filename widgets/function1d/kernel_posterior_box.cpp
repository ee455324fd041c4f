#include "function1d/kernel_posterior_box.h"

#include <cmath>

#include <QLabel>
#include <QVBoxLayout>

#include "common/custom_plot.h"

namespace npe::widgets {
namespace {

QColor family_colour(KernelKind kind) {
  switch (kind) {
    case KernelKind::SquaredExponential:
      return {31, 119, 180};
    case KernelKind::Periodic:
      return {255, 127, 14};
    case KernelKind::Matern52:
      return {44, 160, 44};
  }
  return Qt::gray;
}

QString scale_word(KernelKind kind) {
  return kind == KernelKind::Periodic ? QObject::tr("period") : QObject::tr("ℓ");
}

}  // namespace

QString KernelPosteriorBox::familyName(KernelKind kind) {
  switch (kind) {
    case KernelKind::SquaredExponential:
      return tr("SE");
    case KernelKind::Periodic:
      return tr("Periodic");
    case KernelKind::Matern52:
      return tr("Matérn-5/2");
  }
  return QString::fromStdString(kernel_name(kind));
}

KernelPosteriorBox::KernelPosteriorBox(QWidget* parent)
    : QGroupBox(tr("What the context says about the kernel"), parent) {
  setToolTip(
      tr("The posterior of GP (Bayes over kernels): how probable each kernel family of the "
         "models' training prior is, given the context points (bars), and which scales explain "
         "them (curves: the lengthscale ℓ, or the period of the periodic kernel; areas are "
         "proportional to the bars). An ideal neural process trained on that prior infers "
         "exactly this before it predicts."));
  auto* layout = new QVBoxLayout(this);
  m_plot = new QCustomPlot(this);
  m_plot->setMinimumHeight(190);
  m_plot->setInteractions({});
  m_plot->plotLayout()->clear();
  auto* margins = new QCPMarginGroup(m_plot);
  m_families = new QCPAxisRect(m_plot);
  m_scales = new QCPAxisRect(m_plot);
  for (auto* rect : {m_families, m_scales}) {
    rect->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
  }
  m_plot->plotLayout()->addElement(0, 0, m_families);
  m_plot->plotLayout()->addElement(1, 0, m_scales);
  m_plot->plotLayout()->setRowStretchFactor(0, 0.8);

  auto* probability = m_families->axis(QCPAxis::atBottom);
  probability->setRange(0.0, 1.0);
  // The bars carry their percentages: the axis would only add clutter.
  probability->setVisible(false);
  probability->grid()->setVisible(false);
  m_families->axis(QCPAxis::atLeft)->setTicks(false);

  auto* scale = m_scales->axis(QCPAxis::atBottom);
  scale->setScaleType(QCPAxis::stLogarithmic);
  auto ticker = QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog);
  ticker->setLogBase(2.0);
  ticker->setSubTickCount(0);
  scale->setTicker(ticker);
  scale->setNumberFormat("g");
  scale->setLabel(tr("scale ℓ (period for periodic)"));
  auto* density = m_scales->axis(QCPAxis::atLeft);
  density->setTickLabels(false);
  density->setTicks(false);
  density->setLabel(tr("posterior"));

  m_summary = new QLabel(this);
  m_summary->setWordWrap(true);
  layout->addWidget(m_plot);
  layout->addWidget(m_summary);
}

void KernelPosteriorBox::showPosterior(const KernelPosterior& posterior, const QString& model_name,
                                       int context_points) {
  m_posterior = posterior;
  QString text;
  if (posterior.families.empty()) {
    text = tr("%1 has no kernel families to weigh.").arg(model_name);
  } else if (context_points == 0) {
    text =
        tr("No context points: every family and scale is as probable as before any data "
           "(the prior).");
  } else {
    const auto& best = posterior.families[posterior.most_probable()];
    // Spelled out: %n plurals need a translation file even in English.
    const auto from = context_points == 1 ? tr("From 1 context point")
                                          : tr("From %1 context points").arg(context_points);
    text = tr("%1: most probable %2 (%3\u00a0%), %4 ≈ %5 (median).")
               .arg(from, familyName(best.kind))
               .arg(100.0 * best.probability, 0, 'f', 0)
               .arg(scale_word(best.kind))
               .arg(best.median_scale, 0, 'g', 2);
  }
  m_summary->setText(text);
  draw();
}

void KernelPosteriorBox::clear() {
  m_posterior.reset();
  m_summary->clear();
  draw();
}

QString KernelPosteriorBox::summary() const {
  return m_summary->text();
}

void KernelPosteriorBox::draw() {
  m_plot->clearPlottables();
  m_plot->clearItems();
  if (!m_posterior || m_posterior->families.empty()) {
    m_plot->replot();
    return;
  }
  const auto& families = m_posterior->families;
  const auto count = static_cast<int>(families.size());
  auto labels = QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText);
  double peak = 0.0;
  for (int f = 0; f < count; ++f) {
    const auto& family = families[size_t(f)];
    const auto colour = family_colour(family.kind);
    // The first family on top.
    const double key = count - 1 - f;
    labels->addTick(key, familyName(family.kind));
    auto* bar = new QCPBars(m_families->axis(QCPAxis::atLeft), m_families->axis(QCPAxis::atBottom));
    bar->setWidth(0.7);
    bar->setPen(Qt::NoPen);
    bar->setBrush(colour);
    bar->addData(key, family.probability);
    auto* label = new QCPItemText(m_plot);
    label->setClipToAxisRect(false);
    label->position->setAxes(m_families->axis(QCPAxis::atBottom),
                             m_families->axis(QCPAxis::atLeft));
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    label->position->setCoords(std::min(family.probability, 0.8) + 0.02, key);
    label->setText(QStringLiteral("%1\u00a0%")
                       .arg(100.0 * family.probability, 0, 'f', family.probability < 0.1 ? 1 : 0));

    // The scale posterior as a step curve over log ell (bin masses; areas match the bars).
    const auto bins = static_cast<int>(family.scale_mass.size());
    if (bins == 0) continue;
    const double lo = std::log(m_posterior->scale_low), hi = std::log(m_posterior->scale_high);
    auto* graph =
        m_plot->addGraph(m_scales->axis(QCPAxis::atBottom), m_scales->axis(QCPAxis::atLeft));
    graph->setLineStyle(QCPGraph::lsStepLeft);
    graph->setPen(QPen(colour, 1.5));
    QColor fill = colour;
    fill.setAlpha(60);
    graph->setBrush(fill);
    for (int b = 0; b <= bins; ++b) {
      const double edge = std::exp(lo + (hi - lo) * double(b) / double(bins));
      const double mass = family.scale_mass[size_t(std::min(b, bins - 1))];
      graph->addData(edge, mass);
      peak = std::max(peak, mass);
    }
  }
  m_families->axis(QCPAxis::atLeft)->setTicker(labels);
  m_families->axis(QCPAxis::atLeft)->setTicks(true);
  m_families->axis(QCPAxis::atLeft)->setSubTicks(false);
  m_families->axis(QCPAxis::atLeft)->setTickLength(0);
  m_families->axis(QCPAxis::atLeft)->setRange(-0.6, count - 0.4);
  m_scales->axis(QCPAxis::atBottom)->setRange(m_posterior->scale_low, m_posterior->scale_high);
  m_scales->axis(QCPAxis::atLeft)->setRange(0.0, peak > 0.0 ? 1.08 * peak : 1.0);
  m_plot->replot();
}

}  // namespace npe::widgets
