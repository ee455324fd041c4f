// The helper threads that run a prediction round's models side by side.

#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <QtTest>

#include "common/lane_threads.h"

using npe::widgets::LaneThreads;

class LaneThreadsTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void everyLaneRunsOnceAndEachStaysOnItsThread() {
    LaneThreads lanes(2);
    std::map<size_t, std::thread::id> first;
    for (int round = 0; round < 20; ++round) {
      std::mutex mutex;
      std::map<size_t, std::thread::id> seen;
      bool twice = false;  // checked here: QtTest's checks belong on the test's thread
      lanes.run(3, [&](size_t lane) {
        std::lock_guard lock(mutex);
        if (!seen.emplace(lane, std::this_thread::get_id()).second) twice = true;
      });
      QVERIFY(!twice);
      QCOMPARE(seen.size(), size_t{3});
      QCOMPARE(seen.at(0), std::this_thread::get_id());  // lane 0 is the caller
      QVERIFY(seen.at(1) != seen.at(0) && seen.at(2) != seen.at(1) && seen.at(2) != seen.at(0));
      if (round == 0) first = seen;
      QVERIFY(seen == first);  // the same thread for a lane, round after round
    }
  }

  void moreLanesThanHelpersAreCappedAndFewerAreFine() {
    LaneThreads lanes(1);
    std::atomic<int> calls{0};
    std::atomic<size_t> highest{0};
    lanes.run(4, [&](size_t lane) {
      if (lane > highest) highest = lane;
      ++calls;
    });
    QCOMPARE(calls.load(), 2);
    QCOMPARE(highest.load(), size_t{1});
    calls = 0;
    lanes.run(1, [&](size_t) { ++calls; });
    QCOMPARE(calls.load(), 1);
  }

  void anExceptionInAHelperLaneReachesTheCaller() {
    LaneThreads lanes(1);
    std::atomic<bool> caller_ran{false};
    bool thrown = false;
    try {
      lanes.run(2, [&](size_t lane) {
        if (lane == 1) throw std::runtime_error("lane 1 failed");
        caller_ran = true;
      });
    } catch (const std::runtime_error& e) {
      thrown = QString(e.what()) == "lane 1 failed";
    }
    QVERIFY(thrown);
    QVERIFY(caller_ran.load());
    // The helper still serves later rounds.
    std::atomic<int> calls{0};
    lanes.run(2, [&](size_t) { ++calls; });
    QCOMPARE(calls.load(), 2);
  }

  void aSecondCallerWhileBusyRunsItsLanesItself() {
    LaneThreads lanes(1);
    std::atomic<bool> inside{false}, release{false};
    std::thread first([&] {
      lanes.run(2, [&](size_t lane) {
        if (lane == 1) {
          inside = true;
          while (!release) std::this_thread::yield();
        }
      });
    });
    while (!inside) std::this_thread::yield();
    std::map<size_t, std::thread::id> seen;
    lanes.run(2, [&](size_t lane) { seen[lane] = std::this_thread::get_id(); });
    release = true;
    first.join();
    QCOMPARE(seen.size(), size_t{2});
    QCOMPARE(seen.at(1), std::this_thread::get_id());
  }
};

QTEST_GUILESS_MAIN(LaneThreadsTest)
#include "lane_threads_test.moc"
