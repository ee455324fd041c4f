#pragma once
// What the main window needs from an explorer tab (1-D functions, images, ...): it holds a list
// of these and routes menus, files and sessions through this interface only.

#include <chrono>
#include <functional>
#include <utility>
#include <vector>

#include <QJsonObject>
#include <QStringList>
#include <QWidget>

#include "npe/data/point_table.h"

class QUndoStack;

namespace npe {
struct CheckpointMetadata;
}

namespace npe::widgets {

class ExplorerController;

/// A model's column in a prediction table: "TE-TNP · trained |Δ|≤4" + "mean" gives
/// "TE-TNP_trained_4_mean" (characters other than ASCII letters, digits, '-' and '.' become
/// '_', runs of them one).
std::string prediction_column(const QString& model_name, const std::string& what);

/// Whether a checkpoint's model belongs in the tab for tasks of `task_kinds` ("gp1d" and
/// "series", "image", "era5") whose models map D_x inputs to one of the D_y output counts: the
/// kind of task it was trained on decides (a 2-D task that is not pictures must not open in the
/// Images tab); a checkpoint recording no task kind (imported from the authors' code, or older)
/// is decided by its D_x and D_y.
bool checkpoint_fits_tab(const CheckpointMetadata& metadata,
                         const std::vector<std::string>& task_kinds, int64_t dim_x,
                         const std::vector<int64_t>& dim_y);

class ExplorerPanel : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ExplorerPanel)

 public:
  using QWidget::QWidget;
  ~ExplorerPanel() override = default;

  /// Stable key: the session section and the --tab name ("functions", "images").
  virtual QString panelId() const = 0;
  /// Tab text.
  virtual QString title() const = 0;
  virtual QUndoStack* undoStack() const = 0;
  /// The tab's part of a session file.
  virtual QJsonObject saveSection() const = 0;
  /// Applies a session section. Throws npe::Error (DataError, CheckpointError) and leaves the
  /// current state unchanged when the section is invalid.
  virtual void restoreSection(const QJsonObject& section) = 0;
  /// A session file with this tab alone (the main window saves every tab's section).
  /// Throws npe::Error.
  void saveSession(const QString& path) const;
  /// Applies this tab's section of a session file. Throws npe::DataError or
  /// npe::CheckpointError (the state is kept).
  void loadSession(const QString& path);
  /// Writes the tab's view as PNG, PDF or SVG (by suffix), atomically. Throws npe::Error.
  virtual void exportView(const QString& path) = 0;
  /// The predictions drawn last (a settled round), as a table: the query points' coordinates,
  /// what is known there (truth, held-out or context flags) and each shown model's mean and
  /// standard deviation ("<model>_mean", "<model>_std"). No columns: nothing to export yet.
  virtual PointTable predictionTable() const { return {}; }
  /// What the export writes in place of the first column's numbers, one per row (date-times in
  /// the data's terms); empty: the numbers.
  virtual std::vector<std::string> firstColumnLabels(const PointTable&) const { return {}; }
  /// Writes predictionTable() as CSV, atomically. Throws npe::Error (no predictions yet, or the
  /// file cannot be written).
  void exportPredictions(const QString& path) const;
  /// Whether this tab can show the model of a checkpoint: the task it was trained on decides
  /// (ExplorerController::accepts).
  bool acceptsCheckpoint(const CheckpointMetadata& metadata) const;
  /// Adds a checkpoint's model, shown. Throws npe::Error (CheckpointError for another task's
  /// model).
  void openCheckpoint(const QString& path);
  /// Data files this tab opens besides checkpoints (lower-case suffixes, e.g. "png").
  virtual QStringList dataSuffixes() const { return {}; }
  /// Opens a data file of one of dataSuffixes(). Throws npe::Error; the state is kept on error.
  virtual void openDataFile(const QString& path) { (void)path; }
  virtual void fitView() {}
  /// Whether work that follows the predictions (a sensor-placement proposal) is still being
  /// computed for what is shown; extrasDone() is emitted when it is drawn. --screenshot waits
  /// for it.
  virtual bool extrasPending() const { return false; }
  /// Why the tab cannot predict anything now (e.g. no data file), or empty when it can.
  virtual QString unavailableReason() const { return {}; }
  /// Whether this is the tab in front. A tab behind others runs no prediction rounds: they wait
  /// (the newest only) until it comes to the front. At start-up the images and maps tabs'
  /// rounds ran during the functions tab's first edit and took its cores (up to 74 ms against
  /// ~34 for the other edits, Intel Xeon, 2 cores, 2026-11-24). A panel starts active, as one on
  /// its own (in a test) is.
  void setActive(bool active);
  bool isActive() const { return m_active; }
  /// Names of the models currently shown.
  QStringList shownModelNames() const;
  /// For --measure-edit-latency: makes the i-th small context edit through the undo stack, as
  /// a user's drag or brush stroke would. Returns false when there is nothing to edit.
  virtual bool makeProbeEdit(int index) = 0;
  /// Repaints the view now (so a timing includes the drawing).
  virtual void repaintNow() = 0;
  /// How long each shown model's prediction took (worker thread, milliseconds) in the round
  /// drawn last, by model name: --measure-edit-latency separates computing from drawing.
  const std::vector<std::pair<QString, double>>& lastRoundTimes() const;
  /// Each shown model's FLOPs in that round (prediction_flops; NaN where unknown), by name.
  const std::vector<std::pair<QString, double>>& lastRoundFlops() const;
  /// When the worker started the round drawn last in full.
  std::chrono::steady_clock::time_point lastRoundStarted() const;
  /// When the worker started the round of the delivery drawn last (in full or in part).
  std::chrono::steady_clock::time_point lastDeliveryStarted() const;
  /// How long the worker took for that round, all models (they may run side by side).
  double lastRoundMilliseconds() const;

 protected:
  /// The models, metrics and prediction rounds every tab shares (set by its constructor).
  ExplorerController* controller() const { return m_controller; }
  /// Runs a user action; an npe::Error it throws becomes a status message "<failure>: <why>"
  /// (an empty `failure` shows the reason alone). The state the action guards is unchanged.
  void reportErrors(const QString& failure, const std::function<void()>& action);
  /// The tabs' common layout: `view` on the left (stretching), `controls` in a scroll area of
  /// at least `controls_width` pixels on the right, split by movable handles; `results` (when
  /// given) between them.
  void layOutViewAndControls(QWidget* view, QWidget* controls, int controls_width,
                             QWidget* results = nullptr);
  /// Scrolls the controls so that `group` shows (once the layout has placed it): a group the
  /// user has just brought to life, often below the fold of the side panel.
  void scrollControlsTo(QWidget* group);

 Q_SIGNALS:
  void statusMessage(const QString& message);
  /// A prediction round was drawn; refined = the settled round with all metrics; caught_up =
  /// every shown model's prediction is this round's (none skipped for a newer edit).
  void predictionsUpdated(bool refined, bool caught_up);
  /// Part of a round was drawn: the models done so far, the others still computing.
  void partialPredictionsShown();
  /// What extrasPending() waited for was drawn (or failed).
  void extrasDone();

 private:
  friend class ExplorerController;
  void setController(ExplorerController* controller);
  /// The controller drew a complete round: emits predictionsUpdated.
  void roundDrawn(bool refined, bool caught_up) { Q_EMIT predictionsUpdated(refined, caught_up); }
  /// The controller drew part of a round: emits partialPredictionsShown.
  void partialRoundDrawn() { Q_EMIT partialPredictionsShown(); }

  ExplorerController* m_controller = nullptr;
  bool m_active = true;
};

}  // namespace npe::widgets
