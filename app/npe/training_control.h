#pragma once
// How a running `npe train` is told to pause, resume or stop: SIGINT/SIGTERM (Ctrl-C, kill) and
// SIGHUP (a closed terminal or ssh connection), received on a thread of their own
// (stop_signals.h), ask it to stop after a final checkpoint, and so
// does an event line that cannot be written (output_lost: nobody reads it any more); with
// --progress-json it also reads the commands "pause", "resume" and "stop", one per line, from
// standard input (the GUI's training tab drives it that way). Input that ends while the run is
// paused stops it too: nobody is left to resume it (the tab's ssh connection dropped while the
// job was paused; a host-side run would otherwise hold its checkpoint for ever).

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>

namespace npe::cli {

class TrainingControl {
 public:
  /// Installs the signal handlers; reads commands from standard input when `read_commands`.
  explicit TrainingControl(bool read_commands);
  TrainingControl(const TrainingControl&) = delete;
  TrainingControl& operator=(const TrainingControl&) = delete;

  /// Called between steps: blocks while paused (calling `on_pause(true)` when a pause begins
  /// and `on_pause(false)` when it ends) and returns whether training should go on.
  bool proceed(const std::function<void(bool paused)>& on_pause);
  /// Standard output was closed under the run (its reader is gone): stop as after SIGHUP.
  static void output_lost();
  /// Whether a stop was asked for (by a signal, a command or lost output).
  bool stop_requested() const;

 private:
  // Shared with the detached stdin reader, which may outlive this object: it blocks in read()
  // until a line or end of input arrives, possibly after training has finished.
  struct State {
    std::mutex mutex;
    std::condition_variable changed;
    bool paused = false;
    bool input_ended = false;
    std::atomic<bool> stop{false};
    void command(const char* text);
  };
  static void read_commands(const std::shared_ptr<State>& state);

  std::shared_ptr<State> m_state = std::make_shared<State>();
};

}  // namespace npe::cli
