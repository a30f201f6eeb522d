// Concurrency on the host: 8 threads, each with its own plans,
// 1000 executions each, on every CPU implementation and the reference;
// results bitwise identical to a single-threaded run; failing calls in one
// thread never change another thread's error message. Also runs under TSan
// (.ci/run builds this suite with -fsanitize=thread).
#include <doctest/doctest.h>
#include <stdint.h>
#include <string.h>

#include <atomic>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "check.h"
#include "tensor_util.h"

using namespace avgpool_support;

namespace {

// Implementations under test: every "cpu:" one compiled in, and the reference.
std::vector<std::string> host_impl_names() {
  std::vector<std::string> names = impl_names("cpu:");
  names.push_back("reference");
  return names;
}

using Job = ImplJob;

// Random problems on every host implementation, with their single-threaded
// results: mostly small, the last three big enough for the CPU backend to
// open an OpenMP team inside each call.
std::vector<Job> make_jobs() {
  RandomParamsLimits small, big;
  small.max_n = big.max_n = 2;
  small.max_c = 5; small.max_hw = 28;
  big.max_c = 16; big.max_hw = 96;
  std::vector<Job> jobs = impl_jobs(12, host_impl_names(), 5005, small, 9, big);
  for (Job& j : jobs) {
    avgpool_plan* plan = nullptr;
    REQUIRE(avgpool_plan_create_with_impl(&j.params, j.impl.c_str(), &plan) == AVGPOOL_SUCCESS);
    j.expected.resize((size_t)j.dst_bytes);
    REQUIRE(avgpool_plan_execute(plan, j.src.data(), j.expected.data(), nullptr) == AVGPOOL_SUCCESS);
    avgpool_plan_destroy(plan);
  }
  return jobs;
}

// A reusable spin barrier (C++17 has no std::barrier).
class SpinBarrier {
 public:
  explicit SpinBarrier(int n) : n_(n) {}
  void wait() {
    const int gen = gen_.load();
    if (count_.fetch_add(1) + 1 == n_) {
      count_.store(0);
      gen_.fetch_add(1);
    } else {
      while (gen_.load() == gen) std::this_thread::yield();
    }
  }

 private:
  const int n_;
  std::atomic<int> count_{0}, gen_{0};
};

// A call that fails with a message carrying a value unique to (thread, step).
std::string fail_with_unique_message(int thread, int step) {
  avgpool_params p;
  avgpool_params_init(&p);
  p.backend = AVGPOOL_BACKEND_REFERENCE;
  p.kernel_h = -(int64_t)(1000 * (thread + 1) + step);
  avgpool_plan* plan = nullptr;
  if (avgpool_plan_create(&p, &plan) != AVGPOOL_ERROR_INVALID_ARGUMENT) return "<wrong status>";
  return "kernel_h (" + std::to_string(p.kernel_h) + ")";
}

struct Failures {
  std::mutex mutex;
  std::vector<std::string> list;
  void add(const std::string& s) {
    std::lock_guard<std::mutex> lock(mutex);
    if (list.size() < 20) list.push_back(s);
  }
};

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("8 threads x 1000 executions: bitwise equal to one thread, errors stay in their thread") {
  const std::vector<Job> jobs = make_jobs();
  REQUIRE(jobs.size() >= 12);
  constexpr int kThreads = 8, kExecutions = 1000;
  Failures failures;
  std::atomic<int64_t> executions{0};
  SpinBarrier barrier(kThreads);

  auto worker = [&](int t) {
    // Each thread its own plans (one per job, created here) and buffers.
    std::vector<avgpool_plan*> plans(jobs.size(), nullptr);
    for (size_t i = 0; i < jobs.size(); ++i)
      if (avgpool_plan_create_with_impl(&jobs[i].params, jobs[i].impl.c_str(), &plans[i]) !=
          AVGPOOL_SUCCESS)
        failures.add("thread " + std::to_string(t) + ": plan for " + jobs[i].impl + ": " +
                     avgpool_last_error_message());
    std::vector<unsigned char> dst;

    // Phase 1: every thread fails at once; after a barrier each still sees
    // its own message.
    const std::string mine = fail_with_unique_message(t, 0);
    barrier.wait();
    if (std::string(avgpool_last_error_message()).find(mine) == std::string::npos)
      failures.add("thread " + std::to_string(t) + ": message became \"" +
                   avgpool_last_error_message() + "\", want \"" + mine + "\"");
    barrier.wait();

    // Phase 2: executions, cycling over the jobs from a thread-dependent
    // start; every 25th step a failing call, checked on the spot.
    for (int e = 0; e < kExecutions; ++e) {
      const size_t i = (size_t)(e + t * 7) % jobs.size();
      if (plans[i] == nullptr) continue;
      const Job& j = jobs[i];
      dst.assign((size_t)j.dst_bytes, kPoisonByte);
      if (avgpool_plan_execute(plans[i], j.src.data(), dst.data(), nullptr) != AVGPOOL_SUCCESS) {
        failures.add("thread " + std::to_string(t) + ": " + j.impl + " failed: " +
                     avgpool_last_error_message());
        continue;
      }
      if (avgpool_last_error_message()[0] != '\0')
        failures.add("thread " + std::to_string(t) + ": message after a success: " +
                     avgpool_last_error_message());
      if (memcmp(dst.data(), j.expected.data(), (size_t)j.dst_bytes) != 0)
        failures.add("thread " + std::to_string(t) + ": " + j.impl + " on " + describe(j.params) +
                     ": differs from the single-threaded result (execution " + std::to_string(e) + ")");
      executions.fetch_add(1, std::memory_order_relaxed);
      if (e % 25 == 24) {
        const std::string want = fail_with_unique_message(t, e);
        std::this_thread::yield();
        if (std::string(avgpool_last_error_message()).find(want) == std::string::npos)
          failures.add("thread " + std::to_string(t) + ": message \"" +
                       avgpool_last_error_message() + "\", want \"" + want + "\"");
      }
    }
    for (avgpool_plan* plan : plans) avgpool_plan_destroy(plan);
  };

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (std::thread& th : threads) th.join();
  for (const std::string& f : failures.list) FAIL_CHECK(f);
  CHECK(failures.list.empty());
  CHECK(executions.load() == int64_t{kThreads} * kExecutions);
}

TEST_CASE("plans shared between threads (execute is const) give identical results") {
  const std::vector<Job> jobs = make_jobs();
  std::vector<avgpool_plan*> plans(jobs.size(), nullptr);
  for (size_t i = 0; i < jobs.size(); ++i)
    REQUIRE(avgpool_plan_create_with_impl(&jobs[i].params, jobs[i].impl.c_str(), &plans[i]) ==
            AVGPOOL_SUCCESS);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::vector<unsigned char> dst;
      for (int e = 0; e < 200; ++e) {
        const size_t i = (size_t)(e * 3 + t) % jobs.size();
        dst.assign((size_t)jobs[i].dst_bytes, kPoisonByte);
        if (avgpool_plan_execute(plans[i], jobs[i].src.data(), dst.data(), nullptr) != AVGPOOL_SUCCESS ||
            memcmp(dst.data(), jobs[i].expected.data(), dst.size()) != 0)
          bad.fetch_add(1);
      }
    });
  for (std::thread& th : threads) th.join();
  CHECK(bad.load() == 0);
  for (avgpool_plan* plan : plans) avgpool_plan_destroy(plan);
}

#if defined(_OPENMP)
TEST_CASE("calls from inside a caller's OpenMP parallel region") {
  const std::vector<Job> jobs = make_jobs();
  std::atomic<int> bad{0};
#pragma omp parallel for schedule(dynamic) num_threads(4)
  for (int e = 0; e < 400; ++e) {
    const Job& j = jobs[(size_t)e % jobs.size()];
    std::vector<unsigned char> dst((size_t)j.dst_bytes, kPoisonByte);
    avgpool_plan* plan = nullptr;
    if (avgpool_plan_create_with_impl(&j.params, j.impl.c_str(), &plan) != AVGPOOL_SUCCESS ||
        avgpool_plan_execute(plan, j.src.data(), dst.data(), nullptr) != AVGPOOL_SUCCESS ||
        memcmp(dst.data(), j.expected.data(), dst.size()) != 0)
      bad.fetch_add(1);
    avgpool_plan_destroy(plan);
  }
  CHECK(bad.load() == 0);
}
#endif

}  // TEST_SUITE
