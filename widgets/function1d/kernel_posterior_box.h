#pragma once
// The 1-D tab's "What the context says about the kernel" group: the posterior of a predictor
// that weighs kernel hypotheses (GP, Bayes over kernels) over the kernel families of the models'
// training prior (bars) and over each family's scale ℓ (curves on a log axis). The user sees
// what the context points tell an ideal neural process about the function behind them: a few
// points leave every family open, a periodic pattern settles it.

#include <optional>

#include <QGroupBox>

#include "npe/predictors/kernel_posterior.h"

class QCustomPlot;
class QCPAxisRect;
class QLabel;

namespace npe::widgets {

class KernelPosteriorBox final : public QGroupBox {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(KernelPosteriorBox)

 public:
  explicit KernelPosteriorBox(QWidget* parent = nullptr);

  /// Draws the posterior `model_name` inferred from `context_points` points.
  void showPosterior(const KernelPosterior& posterior, const QString& model_name,
                     int context_points);
  /// Forgets the posterior (the box is then hidden by its owner).
  void clear();
  /// The posterior drawn, if any; for tests.
  const std::optional<KernelPosterior>& posterior() const { return m_posterior; }
  /// The one-line summary under the plot (e.g. "Most probable: periodic, 97 %, period ≈ 0.52").
  QString summary() const;

  /// Display name of a kernel family ("Squared exponential" is "SE" here: the bars are short).
  static QString familyName(KernelKind kind);

 private:
  void draw();

  QCustomPlot* m_plot = nullptr;
  QCPAxisRect* m_families = nullptr;
  QCPAxisRect* m_scales = nullptr;
  QLabel* m_summary = nullptr;
  std::optional<KernelPosterior> m_posterior;
};

}  // namespace npe::widgets
