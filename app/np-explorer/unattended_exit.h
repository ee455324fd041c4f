#pragma once
// Ending an unattended run (--screenshot, --measure-edit-latency) that has given up waiting.

#include <cstdio>
#include <cstdlib>

namespace npe::app {

/// Ends the process now with `status`, without running destructors. A prediction still running
/// on the worker thread cannot be interrupted (a libtorch operation runs to completion: an
/// attention over 200,000 context points takes hours), and the window's destructors would join
/// that thread, so a run that has already reported its failure would otherwise never exit.
/// Nothing is lost: the screenshot and the messages were written before this is called.
[[noreturn]] inline void exit_without_waiting_for_models(int status) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(status);
}

}  // namespace npe::app
