#pragma once
// The images tab's control column: the picture (a Fashion-MNIST test image or the user's own),
// the context (brush size, random pixels, clear) and the translation Δ. The tab adds its models
// and metrics boxes below and keeps the logic.

#include <QWidget>

class QLabel;
class QSpinBox;
class QVBoxLayout;

namespace npe::widgets {

class ShiftControl;

class ImageControls final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ImageControls)

 public:
  /// `test_images`: how many test images there are to browse (0: none installed);
  /// `max_translation`: the largest |Δh|, |Δv|.
  ImageControls(int test_images, int max_translation, QWidget* parent = nullptr);
  /// Adds a group at the end of the column (models, metrics).
  void addGroup(QWidget* group);

  /// Shows this test image's index without emitting testImageChosen.
  void showTestImage(int index);
  void setSourceText(const QString& text);
  int brush() const;
  void setBrush(int pixels);
  ShiftControl* shift() const { return m_shift; }

 Q_SIGNALS:
  void testImageChosen(int index);
  /// The user chose a picture file to open.
  void pictureChosen(const QString& path);
  void brushChanged(int pixels);
  /// Replace the context with this share (%) of the canvas pixels.
  void randomContextRequested(int percent);
  void clearContextRequested();
  void translationChosen(int h, int v);

 private:
  QVBoxLayout* m_column = nullptr;
  QSpinBox* m_index = nullptr;
  QSpinBox* m_brush = nullptr;
  QSpinBox* m_percent = nullptr;
  QLabel* m_source_label = nullptr;
  ShiftControl* m_shift = nullptr;
  uint64_t m_random_seed = 1;
};

}  // namespace npe::widgets
