// kiln/test/test_support/small_stack.h — runs a function on a thread with a small stack.
//
// Deep-input tests (a graph of 100,000 chained nodes, an expression nested 100,000 deep) prove
// that kiln's recursion is bounded by running on far less stack than a process's main thread
// has: an unbounded recursion crashes there instead of passing by luck. The function's
// exception, if any, is rethrown in the caller. Under AddressSanitizer every frame carries
// redzones around its locals and is several times larger, so the stack given is multiplied by
// kSanitizerStackFactor: the same depth fits, and the bound stays finite.
#pragma once

#include "test_support/sanitizer.h"

#include <pthread.h>

#include <exception>
#include <functional>
#include <stdexcept>

namespace kiln::test {

inline constexpr size_t kSanitizerStackFactor = kAddressSanitizer ? 8 : 1;

inline void run_with_stack(size_t stack_bytes, const std::function<void()>& fn) {
  stack_bytes *= kSanitizerStackFactor;
  struct Job {
    const std::function<void()>* fn;
    std::exception_ptr error;
  } job{&fn, nullptr};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes);
  pthread_t t;
  const int rc = pthread_create(
      &t, &attr,
      [](void* p) -> void* {
        auto* j = static_cast<Job*>(p);
        try {
          (*j->fn)();
        } catch (...) {
          j->error = std::current_exception();
        }
        return nullptr;
      },
      &job);
  pthread_attr_destroy(&attr);
  if (rc != 0) throw std::runtime_error("run_with_stack: pthread_create failed");
  pthread_join(t, nullptr);
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace kiln::test
