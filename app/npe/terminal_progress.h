#pragma once
// Progress bar for long-running commands: redrawn in place on a terminal, a line every 10% of
// the work otherwise (logs stay short).

#include <chrono>
#include <cstdint>
#include <string>

namespace npe::cli {

class TerminalProgress {
 public:
  /// `label` prefixes every line; output goes to stderr. Work resumed part-way starts at
  /// `already_done` (rates count only what this run does).
  TerminalProgress(std::string label, int64_t total, int64_t already_done = 0);
  /// Reports `done` units; `details` is appended (e.g. "loss 0.53").
  void update(int64_t done, const std::string& details = {});
  /// Ends the bar with a newline (on a terminal).
  void finish();

 private:
  std::string m_label;
  int64_t m_total;
  int64_t m_already_done;
  bool m_interactive;
  int m_last_decile = -1;
  std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point m_last_draw{};
};

/// "1h02m", "3m05s", "12s".
std::string format_duration(double seconds);

}  // namespace npe::cli
