#pragma once
// Colour scales of the images and maps tabs: grey for pixel values and means, a perceptually
// ordered map for standard deviations, and a colour-bar widget for each.

#include <QColor>
#include <QImage>
#include <QWidget>

#include <torch/types.h>

namespace npe::widgets {

/// Coolwarm: blue - light grey - red, for temperatures and signed errors.
enum class ColourScale { Grey, Magma, Coolwarm };

/// The colour of t in [0, 1] (clamped) on the scale.
QColor scale_colour(ColourScale scale, double t);
/// A [H, W] tensor as an image, values mapped linearly from [low, high] onto the scale; NaN
/// (no data) grey, as the map view draws it.
QImage tensor_image(const torch::Tensor& values, ColourScale scale, double low, double high);

/// A horizontal colour bar with its range labelled below it.
class ColourBar final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ColourBar)

 public:
  ColourBar(ColourScale scale, const QString& title, QWidget* parent = nullptr);
  void setRange(double low, double high);
  QSize sizeHint() const override { return {150, 44}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  ColourScale m_scale;
  QString m_title;
  double m_low = 0.0, m_high = 1.0;
};

}  // namespace npe::widgets
