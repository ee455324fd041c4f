#include "common/lane_threads.h"

#include <algorithm>

namespace npe::widgets {

LaneThreads::LaneThreads(size_t helpers) {
  for (size_t i = 0; i < helpers; ++i) {
    m_helpers.push_back(std::make_unique<Helper>());
    auto& helper = *m_helpers.back();
    helper.thread = std::thread([&helper] { serve(helper); });
  }
}

LaneThreads::~LaneThreads() {
  for (auto& helper : m_helpers) {
    {
      std::lock_guard lock(helper->mutex);
      helper->stop = true;
    }
    helper->wake.notify_one();
    helper->thread.join();
  }
}

void LaneThreads::serve(Helper& helper) {
  std::unique_lock lock(helper.mutex);
  for (;;) {
    helper.wake.wait(lock, [&helper] { return helper.busy || helper.stop; });
    if (helper.stop) return;
    const auto* work = helper.work;
    const size_t lane = helper.lane;
    lock.unlock();
    std::exception_ptr error;
    try {
      (*work)(lane);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    helper.error = error;
    helper.busy = false;
    helper.done.notify_one();
  }
}

void LaneThreads::run(size_t lanes, const std::function<void(size_t)>& work) {
  std::unique_lock running(m_running, std::try_to_lock);
  if (!running.owns_lock()) {  // another round holds the helpers: do without them
    for (size_t lane = 0; lane < lanes; ++lane) work(lane);
    return;
  }
  lanes = std::min(lanes, m_helpers.size() + 1);
  for (size_t lane = 1; lane < lanes; ++lane) {
    auto& helper = *m_helpers[lane - 1];
    {
      std::lock_guard lock(helper.mutex);
      helper.work = &work;
      helper.lane = lane;
      helper.error = nullptr;
      helper.busy = true;
    }
    helper.wake.notify_one();
  }
  std::exception_ptr error;
  try {
    work(0);
  } catch (...) {
    error = std::current_exception();
  }
  // Every helper is waited for, even after an exception: they use `work`.
  for (size_t lane = 1; lane < lanes; ++lane) {
    auto& helper = *m_helpers[lane - 1];
    std::unique_lock lock(helper.mutex);
    helper.done.wait(lock, [&helper] { return !helper.busy; });
    if (!error) error = helper.error;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace npe::widgets
