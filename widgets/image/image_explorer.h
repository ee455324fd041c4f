#pragma once
// The "Images" tab: a picture on a canvas — a Fashion-MNIST test image on the 56 x 56 canvas of
// the T-FashionMNIST task, a held-out picture of the data a model was trained on (grey or colour,
// on that task's canvas), or the user's own — context pixels painted with a brush, a
// whole-pixel translation (Δh, Δv), and every shown model's predictive mean and standard
// deviation.

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "common/explorer_panel.h"
#include "common/prediction_service.h"
#include "image/image_source.h"

class QCheckBox;
class QLabel;
class QScrollArea;
class QSpinBox;
class QUndoStack;

namespace npe {
class PictureTaskSource;
}

namespace npe::widgets {

class ContextMask;
class ExplorerController;
class ImageCanvas;
class ImageControls;
class MetricsTable;
class ModelList;
struct ShownCanvas;
class PredictionGrid;
class ShiftControl;

class ImageExplorer final : public ExplorerPanel {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ImageExplorer)

 public:
  /// The canvas of Fashion-MNIST's pictures (T-FashionMNIST, Appendix F.2).
  static constexpr int kFashionMnistCanvas = 56;

  /// Loads the shipped image models (models/tfmnist); neural models run on `device`.
  explicit ImageExplorer(QWidget* parent = nullptr, torch::Device device = torch::kCPU);
  ~ImageExplorer() override;

  // ExplorerPanel
  QString panelId() const override { return "images"; }
  QString title() const override { return tr("Images"); }
  QUndoStack* undoStack() const override { return m_undo; }
  QJsonObject saveSection() const override;
  void restoreSection(const QJsonObject& section) override;
  void exportView(const QString& path) override;
  /// One row per canvas pixel: row, column, truth (grey in [0, 1]), context (1 for context
  /// pixels) and each model's mean and std.
  PointTable predictionTable() const override;
  QStringList dataSuffixes() const override;
  void openDataFile(const QString& path) override;
  bool makeProbeEdit(int index) override;
  void repaintNow() override;

  /// Shows test picture `index` of the pictures browsed. Throws npe::DataError (state kept).
  void showTestImage(int index);
  /// Browses the held-out pictures of the data of a model trained on pictures (its id), or
  /// Fashion-MNIST's test set (empty): the canvas, picture size and channels become theirs, and
  /// shown models that take another number of channels are switched off. Throws npe::DataError
  /// (state kept).
  void showCollection(const QString& id);
  /// The model whose pictures are browsed (empty: Fashion-MNIST).
  const QString& collection() const { return m_collection; }
  /// Side of the square canvas shown.
  int canvasSide() const { return m_side; }
  /// |Δh|, |Δv| <= this keeps the picture on the canvas.
  int maxTranslation() const { return (m_side - m_source.side()) / 2; }
  /// Replaces the context with `percent` % of the canvas pixels, chosen at random (undoable).
  void randomContext(double percent);
  /// Translation (Δh columns, Δv rows), clamped to ±kMaxTranslation.
  void setTranslation(int h, int v);
  int translationH() const { return m_h; }
  int translationV() const { return m_v; }
  void setModelEnabled(const QString& id, bool enabled);

  ContextMask* mask() const { return m_mask; }
  ImageCanvas* canvas() const { return m_canvas; }
  PredictionGrid* predictions() const { return m_grid; }
  ModelList* modelList() const { return m_models; }
  MetricsTable* metrics() const { return m_metrics; }
  const ImageSource& source() const { return m_source; }
  /// The ground truth as displayed at the current translation: [side, side] (grey) or [side,
  /// side, 3] (colour) in [0, 1].
  torch::Tensor displayedTruth() const;
  /// Pixel information shown while hovering (row, column of the displayed canvas).
  QString describePixel(int row, int column) const;

 protected:
  void keyPressEvent(QKeyEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private Q_SLOTS:
  void onPredictions(const npe::widgets::PredictionResult& result);
  void onStroke(const std::vector<int>& display_pixels, bool on, int stroke);
  void onHovered(int row, int column);

 private:
  /// A σ-per-pixel model is told apart from its homoscedastic twin, and every model says where
  /// it saw pictures in training.
  void nameModel(ModelEntry& entry) const;
  std::optional<PredictionRequest> sceneRequest() const;
  void setSource(ImageSource source);
  /// A model trained on pictures brings its data: offered among the pictures to browse, and,
  /// with `show`, shown. False (with a status message when they cannot be read) for others.
  bool offerPicturesOf(const ModelEntry& entry, bool show);
  /// A canvas of this side with this picture; a new side starts a new context.
  void setGeometry(int canvas, ImageSource source);
  /// A model switched on that takes another number of channels than the picture has: shows its
  /// own pictures, or switches it off again with a message.
  void fitDataToModel(const QString& id);
  void redrawCanvas();
  void schedulePredictions(bool refine);
  QRect trainingWindow() const;
  /// Narrows the prediction grid until every shown model's row fits the height it has.
  void fitGridToHeight();
  int baseIndex(int display_row, int display_column) const;
  /// The canvas as shown (truth and context at the current translation), for the read-outs.
  ShownCanvas shownCanvas() const;

  ImageSource m_source;
  ContextMask* m_mask = nullptr;
  QUndoStack* m_undo = nullptr;
  ExplorerController* m_controller = nullptr;
  ImageCanvas* m_canvas = nullptr;
  PredictionGrid* m_grid = nullptr;
  QScrollArea* m_grid_area = nullptr;
  ModelList* m_models = nullptr;
  MetricsTable* m_metrics = nullptr;
  ImageControls* m_controls = nullptr;
  ShiftControl* m_shift = nullptr;
  QLabel* m_hover = nullptr;
  QWidget* m_view_area = nullptr;
  int m_side = kFashionMnistCanvas;
  int m_h = 0, m_v = 0;
  /// Held-out pictures of the models trained on pictures, by model id.
  std::map<QString, std::shared_ptr<const PictureTaskSource>> m_collections;
  QString m_collection;
  /// While a session's models are added: they do not switch the pictures to theirs.
  bool m_applying_session = false;
  uint64_t m_random_seed = 1;
  PredictionResult m_last;
};

}  // namespace npe::widgets
