#include "maps/small_maps.h"

#include <algorithm>

#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>

#include "common/colour_map.h"
#include "common/pixel_view.h"

namespace npe::widgets {
namespace {

// The small maps grow with the window between these sizes.
constexpr int kSmallMapMinimum = 80;
constexpr int kSmallMapMaximum = 260;

}  // namespace

double finite_min(const torch::Tensor& t, double fallback) {
  const auto v = t.masked_select(torch::isfinite(t));
  return v.numel() > 0 ? v.min().item<double>() : fallback;
}

double finite_max(const torch::Tensor& t, double fallback) {
  const auto v = t.masked_select(torch::isfinite(t));
  return v.numel() > 0 ? v.max().item<double>() : fallback;
}

SmallMaps::SmallMaps(QWidget* parent) : QWidget(parent) {
  m_layout = new QGridLayout(this);
  m_layout->setContentsMargins(0, 0, 0, 0);
}

void SmallMaps::show(const torch::Tensor& truth, const std::vector<Model>& models) {
  for (int r = 0; r < m_layout->rowCount(); ++r) m_layout->setRowStretch(r, 0);
  while (auto* item = m_layout->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  if (!truth.defined()) return;
  double low = finite_min(truth, 0.0), high = finite_max(truth, 1.0), sd_high = 1e-3;
  for (const auto& model : models) {
    low = std::min(low, finite_min(model.mean, low));
    high = std::max(high, finite_max(model.mean, high));
    sd_high = std::max(sd_high, finite_max(model.stddev, sd_high));
  }
  auto add = [&](int row, int col, const QString& caption, const QImage& image) {
    auto* cell = new QWidget(this);
    auto* layout = new QVBoxLayout(cell);
    layout->setContentsMargins(2, 2, 2, 2);
    auto* label = new QLabel(caption, cell);
    label->setAlignment(Qt::AlignCenter);
    auto* view = new PixelView(cell);
    view->setImage(image);
    // Square pictures that grow with the column; the cap keeps the rows from claiming more
    // height than the tab has.
    view->setMinimumSize(kSmallMapMinimum, kSmallMapMinimum);
    view->setMaximumSize(kSmallMapMaximum, kSmallMapMaximum);
    view->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    layout->addWidget(label);
    layout->addWidget(view, 1, Qt::AlignHCenter);
    m_layout->addWidget(cell, row, col);
  };
  add(0, 0, tr("truth"), tensor_image(truth, ColourScale::Coolwarm, low, high));
  int row = 1;
  for (const auto& model : models) {
    add(row, 0, model.name, tensor_image(model.mean, ColourScale::Coolwarm, low, high));
    add(row, 1, tr("%1 σ").arg(model.name),
        tensor_image(model.stddev, ColourScale::Magma, 0.0, sd_high));
    ++row;
  }
  auto* legend = new QLabel(tr("Target window: means on %1 … %2 °C (blue to red); σ on 0 … %3 K")
                                .arg(low, 0, 'f', 1)
                                .arg(high, 0, 'f', 1)
                                .arg(sd_high, 0, 'f', 2),
                            this);
  legend->setWordWrap(true);
  m_layout->addWidget(legend, 0, 1);
  for (int r = 0; r < row; ++r) m_layout->setRowStretch(r, 1);
}

}  // namespace npe::widgets
