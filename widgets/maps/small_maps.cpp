#include "maps/small_maps.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

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

void SmallMaps::clear() {
  for (int r = 0; r < m_layout->rowCount(); ++r) m_layout->setRowStretch(r, 0);
  while (auto* item = m_layout->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  m_cells.clear();
  m_legend = nullptr;
}

SmallMaps::Cell SmallMaps::addCell(int row, int column) {
  auto* cell = new QWidget(this);
  auto* layout = new QVBoxLayout(cell);
  layout->setContentsMargins(2, 2, 2, 2);
  Cell result{new QLabel(cell), new PixelView(cell)};
  result.caption->setAlignment(Qt::AlignCenter);
  // Square pictures that grow with the column; the cap keeps the rows from claiming more
  // height than the tab has.
  result.view->setMinimumSize(kSmallMapMinimum, kSmallMapMinimum);
  result.view->setMaximumSize(kSmallMapMaximum, kSmallMapMaximum);
  result.view->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  layout->addWidget(result.caption);
  layout->addWidget(result.view, 1, Qt::AlignHCenter);
  m_layout->addWidget(cell, row, column);
  return result;
}

void SmallMaps::show(const torch::Tensor& truth, const std::vector<Model>& models,
                     bool truth_hidden) {
  const size_t cells = truth.defined() ? 1 + 2 * models.size() : 0;
  if (cells != m_cells.size()) {
    clear();
    if (cells == 0) return;
    m_cells.push_back(addCell(0, 0));
    for (int row = 1; row <= int(models.size()); ++row) {
      m_cells.push_back(addCell(row, 0));
      m_cells.push_back(addCell(row, 1));
    }
    m_legend = new QLabel(this);
    m_legend->setWordWrap(true);
    m_layout->addWidget(m_legend, 0, 1);
    for (int r = 0; r <= int(models.size()); ++r) m_layout->setRowStretch(r, 1);
  }
  if (cells == 0) return;
  // A hidden truth's extremes would tell what it hides: the models' alone set the scale.
  const auto shown_truth =
      truth_hidden ? torch::full_like(truth, std::numeric_limits<double>::quiet_NaN()) : truth;
  double low = finite_min(shown_truth, std::numeric_limits<double>::infinity());
  double high = finite_max(shown_truth, -std::numeric_limits<double>::infinity());
  double sd_high = 1e-3;
  for (const auto& model : models) {
    low = std::min(low, finite_min(model.mean, low));
    high = std::max(high, finite_max(model.mean, high));
    sd_high = std::max(sd_high, finite_max(model.stddev, sd_high));
  }
  auto set = [](Cell& cell, const QString& caption, const QImage& image) {
    if (cell.caption->text() != caption) cell.caption->setText(caption);
    cell.view->setImage(image);
  };
  if (!std::isfinite(low) || !std::isfinite(high)) std::tie(low, high) = std::pair(0.0, 1.0);
  set(m_cells[0], truth_hidden ? tr("truth (hidden: an episode runs)") : tr("truth"),
      tensor_image(shown_truth, ColourScale::Coolwarm, low, high));
  for (size_t m = 0; m < models.size(); ++m) {
    const auto& model = models[m];
    set(m_cells[1 + 2 * m], model.name, tensor_image(model.mean, ColourScale::Coolwarm, low, high));
    set(m_cells[2 + 2 * m], tr("%1 σ").arg(model.name),
        tensor_image(model.stddev, ColourScale::Magma, 0.0, sd_high));
  }
  m_legend->setText(tr("Target window: means on %1 … %2 °C (blue to red); σ on 0 … %3 K")
                        .arg(low, 0, 'f', 1)
                        .arg(high, 0, 'f', 1)
                        .arg(sd_high, 0, 'f', 2));
}

}  // namespace npe::widgets
