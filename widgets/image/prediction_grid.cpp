#include "image/prediction_grid.h"

#include <algorithm>
#include <cstring>

#include <QGridLayout>

#include <torch/torch.h>

#include "common/colour_map.h"
#include "common/model_entry.h"
#include "common/pixel_view.h"

namespace npe::widgets {
namespace {

// The column of model names beside the pictures (pixels).
constexpr int kLabelMinimumWidth = 90, kLabelMaximumWidth = 150;
// The smallest a picture is drawn (pixels): 4 screen pixels per image pixel of a 28 × 28 canvas.
constexpr int kPictureMinimumSide = 120;

// A colour mean [H, W, 3] in [0, 1] (clamped: a mean may leave it) as the picture it predicts.
QImage colour_image(const torch::Tensor& mean) {
  const auto bytes = (mean.clamp(0.0, 1.0) * 255.0).round().to(torch::kUInt8).contiguous();
  const int height = int(bytes.size(0)), width = int(bytes.size(1));
  QImage image(width, height, QImage::Format_RGB888);
  for (int r = 0; r < height; ++r) {
    std::memcpy(image.scanLine(r), bytes[r].data_ptr<uint8_t>(), size_t(width) * 3);
  }
  return image;
}

// The std shown per pixel: its own, or for colour the mean of its channels' (said in the
// column's title).
torch::Tensor shown_stddev(const torch::Tensor& stddev) {
  return stddev.dim() == 3 ? stddev.mean(2) : stddev;
}

}  // namespace

PredictionGrid::PredictionGrid(QWidget* parent) : QWidget(parent) {
  m_layout = new QGridLayout(this);
  m_layout->setContentsMargins(0, 0, 0, 0);
  m_mean_bar = new ColourBar(ColourScale::Grey, tr("mean"), this);
  m_std_bar = new ColourBar(ColourScale::Magma, tr("std"), this);
  m_layout->addWidget(new QLabel(tr("<b>Predictive mean</b>"), this), 0, 1, Qt::AlignHCenter);
  m_std_title = new QLabel(tr("<b>Predictive std</b>"), this);
  m_layout->addWidget(m_std_title, 0, 2, Qt::AlignHCenter);
  m_layout->addWidget(m_mean_bar, 1, 1);
  m_layout->addWidget(m_std_bar, 1, 2);
}

double PredictionGrid::stddevScale() const {
  double top = 0.0;
  for (const auto& row : m_rows) {
    if (row.stddev.defined()) top = std::max(top, shown_stddev(row.stddev).max().item<double>());
  }
  return top > 0 ? top : 1.0;
}

int PredictionGrid::widthShowingEveryRow(int height) const {
  const int rows = static_cast<int>(m_rows.size());
  if (rows == 0) return QWIDGETSIZE_MAX;
  const int spacing = std::max(m_layout->verticalSpacing(), 0);
  int header = 0;  // the titles and the colour bars
  for (int r = 0; r < 2; ++r) {
    if (auto* item = m_layout->itemAtPosition(r, 2)) header += item->sizeHint().height() + spacing;
  }
  const int side = std::max(kPictureMinimumSide, (height - header) / rows - spacing);
  int labels = kLabelMinimumWidth;  // the names' column, as wide as setRows made it
  for (const auto* cell : m_cells) labels = std::max(labels, cell->minimumWidth());
  return labels + 2 * side + 2 * std::max(m_layout->horizontalSpacing(), 0);
}

void PredictionGrid::setRows(std::vector<Row> rows) {
  const bool same_models = rows.size() == m_rows.size() &&
                           std::equal(rows.begin(), rows.end(), m_rows.begin(),
                                      [](const Row& a, const Row& b) { return a.id == b.id; });
  m_rows = std::move(rows);
  if (!same_models) rebuild();
  const double std_top = stddevScale();
  m_mean_bar->setRange(0.0, 1.0);
  m_std_bar->setRange(0.0, std_top);
  // Colour means are drawn as the pictures they predict: no grey scale to read them by.
  const bool colour = std::any_of(m_rows.begin(), m_rows.end(), [](const Row& row) {
    return row.mean.defined() && row.mean.dim() == 3;
  });
  m_mean_bar->setVisible(!colour);
  m_std_title->setText(colour ? tr("<b>Predictive std</b> (mean of R, G, B)")
                              : tr("<b>Predictive std</b>"));
  for (size_t i = 0; i < m_rows.size(); ++i) {
    const auto& row = m_rows[i];
    auto* label = static_cast<QLabel*>(m_cells[i]);
    QString note = row.status;
    if (note.isEmpty() && row.stddev.defined() && row.stddev.numel() > 0) {
      // Homoscedastic models (the paper's image setting) predict one noise level everywhere
      // (per channel for colour: the column shows their mean).
      const auto shown = shown_stddev(row.stddev);
      if ((shown.max() - shown.min()).item<double>() < 1e-6) {
        note =
            row.stddev.dim() == 3
                ? tr("constant σ = %1 (mean of R, G, B)").arg(shown.max().item<double>(), 0, 'f', 3)
                : tr("constant σ = %1").arg(shown.max().item<double>(), 0, 'f', 3);
      }
    }
    // One line per part of the name ("ConvCNP 2-D", "trained |Δ|≤4"), the column wide enough
    // for each: at its old fixed minimum it wrapped them at "2-" and "|Δ|".
    const auto parts = row.name.split(QStringLiteral(" · "));
    int widest = label->fontMetrics().horizontalAdvance(QStringLiteral("■ ") + parts.front());
    QStringList lines;
    for (const auto& part : parts) {
      widest = std::max(widest, label->fontMetrics().horizontalAdvance(part));
      lines << part.toHtmlEscaped();
    }
    if (!note.isEmpty()) lines << "<i>" + note.toHtmlEscaped() + "</i>";
    label->setMinimumWidth(std::clamp(widest + 4, kLabelMinimumWidth, kLabelMaximumWidth));
    label->setText(
        QString("<span style='color:%1'>■</span> %2").arg(row.colour.name(), lines.join("<br>")));
    if (row.mean.defined()) {
      m_views[2 * i]->setImage(row.mean.dim() == 3
                                   ? colour_image(row.mean)
                                   : tensor_image(row.mean, ColourScale::Grey, 0.0, 1.0));
      m_views[2 * i + 1]->setImage(
          tensor_image(shown_stddev(row.stddev), ColourScale::Magma, 0.0, std_top));
    }
  }
}

void PredictionGrid::rebuild() {
  for (auto* w : m_cells) w->deleteLater();
  for (auto* v : m_views) v->deleteLater();
  m_cells.clear();
  m_views.clear();
  for (size_t i = 0; i < m_rows.size(); ++i) {
    const int grid_row = static_cast<int>(i) + 2;
    auto* label = new QLabel(this);
    label->setWordWrap(true);
    label->setMinimumWidth(kLabelMinimumWidth);
    label->setMaximumWidth(kLabelMaximumWidth);
    m_layout->addWidget(label, grid_row, 0);
    m_cells.push_back(label);
    for (int k = 0; k < 2; ++k) {
      auto* view = new PixelView(this);
      view->setMinimumSize(kPictureMinimumSide, kPictureMinimumSide);
      m_layout->addWidget(view, grid_row, 1 + k);
      connect(view, &PixelView::hovered, this, &PredictionGrid::hovered);
      m_views.push_back(view);
    }
  }
  m_layout->setColumnStretch(1, 1);
  m_layout->setColumnStretch(2, 1);
  for (int r = 0; r < m_layout->rowCount(); ++r) m_layout->setRowStretch(r, 0);
  m_layout->setRowStretch(static_cast<int>(m_rows.size()) + 2, 1);
}

QString PredictionGrid::rowText(int i) const {
  return i >= 0 && i < static_cast<int>(m_cells.size()) ? static_cast<QLabel*>(m_cells[i])->text()
                                                        : QString();
}

void PredictionGrid::setHighlight(int row, int column) {
  for (auto* view : m_views) view->setHighlight(row, column);
}

}  // namespace npe::widgets
