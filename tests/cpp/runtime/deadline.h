// RunWithDeadline: turns a hang into a test failure.
//
// Runs `body` on a thread of its own and waits for it up to `limit` (a
// generous bound, not a timing assertion). If it has not returned by then,
// the test fails and the process exits at once: the stuck thread cannot be
// stopped or joined, and every later test would otherwise hang behind it.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <memory>
#include <thread>

namespace baton::testing {

inline void RunWithDeadline(std::function<void()> body,
                            std::chrono::seconds limit = std::chrono::seconds(120)) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  std::thread([body = std::move(body), done] {
    body();
    done->set_value();
  }).detach();
  if (finished.wait_for(limit) != std::future_status::ready) {
    ADD_FAILURE() << "the test body did not finish within " << limit.count()
                  << " s: it hangs";
    std::fprintf(stderr, "RunWithDeadline: hang detected; exiting\n");
    std::fflush(stderr);
    std::_Exit(1);
  }
  finished.get();
}

}  // namespace baton::testing
