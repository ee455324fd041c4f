#pragma once
// Measures the time from a context edit to the redrawn view in the running window, for any
// tab: makes a small context edit through the tab's undo stack (as a drag or brush dab would),
// waits for the predictions of every shown model to be drawn, repeats, and prints the median,
// spread and maximum.

#include <QElapsedTimer>
#include <QObject>
#include <vector>

namespace npe::widgets {
class ExplorerPanel;
}

namespace npe::app {

class EditLatencyProbe final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(EditLatencyProbe)

 public:
  /// Starts after the first settled prediction round; quits the application when done.
  EditLatencyProbe(widgets::ExplorerPanel* panel, int edits, QObject* parent = nullptr);

 private:
  void edit();
  void onPredictions(bool refined);
  void report();

  widgets::ExplorerPanel* m_panel;
  int m_edits;
  bool m_started = false;
  bool m_waiting = false;
  QElapsedTimer m_timer;
  std::vector<double> m_ms;
};

}  // namespace npe::app
