#pragma once
// The images tab's control column: the picture (a Fashion-MNIST test image, a test picture of a
// model's own data, or the user's own),
// the context (brush size, random pixels, clear) and the translation Δ. The tab adds its models
// and metrics boxes below and keeps the logic.

#include <vector>

#include <QWidget>

class QComboBox;
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

  /// Adds a model's data (its test pictures) to the pictures one can browse.
  void addCollection(const QString& id, const QString& name);
  /// Shows which pictures are browsed (empty id: Fashion-MNIST's test set) and how many there
  /// are, without emitting collectionChosen.
  void showCollection(const QString& id, int count);
  /// Shows this test image's index without emitting testImageChosen.
  void showTestImage(int index);
  /// The largest |Δh|, |Δv| (the canvas and picture sizes decide it).
  void setMaxTranslation(int pixels);
  void setSourceText(const QString& text);
  int brush() const;
  void setBrush(int pixels);
  ShiftControl* shift() const { return m_shift; }

 Q_SIGNALS:
  void testImageChosen(int index);
  /// Browse these pictures: a model's data (its id) or Fashion-MNIST's test set (empty).
  void collectionChosen(const QString& id);
  /// The user chose a picture file to open.
  void pictureChosen(const QString& path);
  void brushChanged(int pixels);
  /// Replace the context with this share (%) of the canvas pixels.
  void randomContextRequested(int percent);
  void clearContextRequested();
  void translationChosen(int h, int v);

 private:
  QVBoxLayout* m_column = nullptr;
  QComboBox* m_collection = nullptr;
  QSpinBox* m_index = nullptr;
  std::vector<QWidget*> m_browse;  ///< the index and the buttons that step through pictures
  QSpinBox* m_brush = nullptr;
  QSpinBox* m_percent = nullptr;
  QLabel* m_source_label = nullptr;
  ShiftControl* m_shift = nullptr;
  uint64_t m_random_seed = 1;
};

}  // namespace npe::widgets
