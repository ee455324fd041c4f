#pragma once
// The "Maps" tab: ERA5 temperature over the British Isles. Stations (context points) observe
// the true temperature at their cell at the current hour and the four 6-hourly times before
// it; every shown model predicts the target window at the current hour. The window and its
// stations shift together by Δ (cells), so a model trained on the southern half can be
// watched predicting the north. 2-D map or 3-D relief (VTK), small maps of every model,
// metrics, time slider and play.

#include <memory>
#include <optional>
#include <vector>

#include <QTimer>

#include "common/explorer_panel.h"
#include "common/prediction_service.h"
#include "maps/grid_description.h"
#include "maps/station_editor.h"
#include "maps/training_data.h"
#include "npe/data/era5_tasks.h"

class QCheckBox;
class QComboBox;
class QGridLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSlider;
class QSpinBox;
class QUndoStack;

namespace npe::widgets {

class EpisodeBox;
class ExplorerController;
class MapControls;
class MapEpisodeRunner;
class MapView;
class MapViewArea;
struct MapFrame;
class MetricsTable;
class ModelList;
class ShiftControl;
class SmallMaps;
class StationSet;
class StationSuggestions;

class MapExplorer final : public ExplorerPanel {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(MapExplorer)

 public:
  /// Reads the default ERA5 file (default_era5_path()); without it the tab says what is
  /// missing and offers to open a file. Neural models run on `device`.
  explicit MapExplorer(QWidget* parent = nullptr, torch::Device device = torch::kCPU);
  ~MapExplorer() override;

  // ExplorerPanel
  QString panelId() const override { return "maps"; }
  QString title() const override { return tr("Maps"); }
  QUndoStack* undoStack() const override { return m_undo; }
  QJsonObject saveSection() const override;
  void restoreSection(const QJsonObject& section) override;
  void exportView(const QString& path) override;
  /// One row per cell of the target window: latitude, longitude (degrees), the truth (°C) and
  /// each model's mean (°C) and standard deviation (K).
  PointTable predictionTable() const override;

  /// The gridded readers' suffixes (gridded_suffixes()).
  QStringList dataSuffixes() const override;
  /// Opens a NetCDF or GRIB file: the variable named by setVariable, else the file's only
  /// gridded variable or its first in a temperature unit (said in the status bar and the data
  /// box). Throws npe::Error; the state is kept on error.
  QString unavailableReason() const override;
  void openDataFile(const QString& path) override;
  bool makeProbeEdit(int index) override;
  void repaintNow() override;
  bool extrasPending() const override;

  /// The variable the next openDataFile reads (empty: automatic).
  void setVariable(const QString& name);
  /// Reads another variable of the open file (the Data box's list). Throws npe::Error; the state
  /// is kept on error.
  void chooseVariable(const QString& name);
  /// The Data box's list of the file's gridded variables.
  const QComboBox* variableList() const;
  bool hasData() const { return static_cast<bool>(m_source); }
  const Era5TaskSource* source() const { return m_source.get(); }
  /// Hour index into the file (the time predicted).
  void setHour(int index);
  int hour() const { return m_hour; }
  /// Region shift in cells (north, east), clamped to keep the window on the grid.
  void setShift(int north, int east);
  int shiftNorth() const { return m_north; }
  int shiftEast() const { return m_east; }
  void setThreeD(bool on);
  /// Replaces the stations by n random cells of the window (undoable).
  void randomStations(int n) { m_station_editor->randomStations(n); }
  /// What a click on absolute grid cell (x = column, y = row) does: adds a station there, or
  /// removes the station already there. Returns false outside the target window.
  bool clickCell(const QPoint& cell) { return m_station_editor->clickCell(cell); }
  /// Moves the station at absolute cell `from` to `to` (both in the window), undoable.
  bool moveStation(const QPoint& from, const QPoint& to, int drag) {
    return m_station_editor->moveStation(from, to, drag);
  }
  /// Layer shown in the main view: "truth", or "<model id>|mean", "|stddev", "|error".
  void setLayer(const QString& layer);
  QString layer() const { return m_layer; }
  void setModelEnabled(const QString& id, bool enabled);
  /// Shows the data of a model trained on a grid of the user's (own_training_data): its file,
  /// read with its statistics and settings, from a test day; the other models see that file as
  /// they see any other. False (and a status message when its file cannot be read) for a model
  /// without data of its own, or when that data is already shown.
  bool offerDataOf(const ModelEntry& entry);

  StationSet* stations() const { return m_stations; }
  /// "Observe the truth": episodes in which stations are added where a strategy says.
  MapEpisodeRunner* episodeRunner() const { return m_episode_runner; }
  EpisodeBox* episodeBox() const { return m_episode_box; }
  /// An episode hides the truth: no truth or error layer, small map or hover value.
  bool truthHidden() const { return m_truth_hidden; }
  /// "Suggest stations": the sensor placement of a chosen model.
  StationSuggestions* suggestions() const { return m_suggestions; }
  /// The VTK view, created on first use; null where the platform has no OpenGL.
  MapView* view();
  ModelList* modelList() const { return m_models; }
  MetricsTable* metrics() const { return m_metrics; }
  /// Target window (x = left column, y = top row, window x window cells) at the current shift.
  QRect targetWindow() const;
  /// The latest prediction round.
  const PredictionResult& lastResult() const { return m_last; }
  /// What the models are asked now: the stations' readings (with an episode's noise), every
  /// cell of the window and the held-out cells; nothing without data.
  std::optional<PredictionRequest> sceneRequest() const;

 private:
  void setSource(std::shared_ptr<Era5TaskSource> source);
  void schedulePredictions(bool refine);
  void onPredictions(const PredictionResult& result);
  void redraw();
  /// The model's name on the map and the small maps, "(updating…)" while its last prediction
  /// stands in for the round still computing it.
  QString shownName(const ModelEntry& entry) const;
  void rebuildLayerChoices();
  void rebuildSmallMaps();
  void updateTimeLabel();
  /// The data, target window and hour the maps are read at (needs a source).
  MapFrame frame() const;
  /// Whether a station could be added at a window cell: none there, data there now and place
  /// features.
  bool freeCell(const QPoint& window_cell) const;
  void setTruthHidden(bool hidden);
  /// The layer drawn: the chosen one, or while the truth is hidden and it shows the truth,
  /// the first shown model's mean.
  QString shownLayer() const;

  std::shared_ptr<Era5TaskSource> m_source;
  StationSet* m_stations = nullptr;
  QUndoStack* m_undo = nullptr;
  ExplorerController* m_controller = nullptr;
  ModelList* m_models = nullptr;
  MetricsTable* m_metrics = nullptr;
  ShiftControl* m_shift = nullptr;
  QSlider* m_time = nullptr;
  QLabel* m_time_label = nullptr;
  QComboBox* m_layers = nullptr;
  QCheckBox* m_three_d_box = nullptr;
  QLabel* m_data_label = nullptr;
  QLabel* m_station_note = nullptr;
  MapControls* m_controls = nullptr;
  QString m_next_variable;  ///< setVariable's, for the next openDataFile
  SmallMaps* m_small_maps = nullptr;
  StationEditor* m_station_editor = nullptr;
  StationSuggestions* m_suggestions = nullptr;
  EpisodeBox* m_episode_box = nullptr;
  MapEpisodeRunner* m_episode_runner = nullptr;
  bool m_truth_hidden = false;
  MapViewArea* m_view_area = nullptr;
  QTimer m_play_timer;
  std::shared_ptr<const std::vector<std::vector<QPointF>>> m_coastlines;
  /// The models' task as trained (statistics, units, training region); its source is moved
  /// to m_source at start.
  TrainingData m_training;
  QString m_layer = "truth";
  int m_hour = 0, m_north = 0, m_east = 0;
  int m_base_row = 18, m_base_col = 20;
  bool m_three_d = false;
  bool m_applying_session = false;  ///< a session's models bring no data: the session names it
  PredictionResult m_last;
};

}  // namespace npe::widgets
