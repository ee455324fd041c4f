#pragma once
// Persistent helper threads for work split into lanes, each lane always on the same thread, so
// whatever a lane's work keeps per thread (oneDNN primitives built for its shapes, allocator
// arenas) is still there the next time.

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace npe::widgets {

class LaneThreads {
 public:
  /// `helpers` threads, started now and joined by the destructor.
  explicit LaneThreads(size_t helpers);
  ~LaneThreads();
  LaneThreads(const LaneThreads&) = delete;
  LaneThreads& operator=(const LaneThreads&) = delete;

  /// Runs work(0) on the calling thread and work(l) for l = 1 .. lanes - 1 on helper l - 1 (at
  /// most helpers + 1 lanes), and returns when every lane is done; an exception from a lane is
  /// rethrown here. While another call is running, all lanes run here, one after another.
  void run(size_t lanes, const std::function<void(size_t lane)>& work);

  size_t helpers() const { return m_helpers.size(); }

 private:
  struct Helper {
    std::thread thread;
    std::mutex mutex;
    std::condition_variable wake, done;
    const std::function<void(size_t)>* work = nullptr;
    size_t lane = 0;
    bool busy = false, stop = false;
    std::exception_ptr error;
  };
  static void serve(Helper& helper);

  std::vector<std::unique_ptr<Helper>> m_helpers;
  std::mutex m_running;
};

}  // namespace npe::widgets
