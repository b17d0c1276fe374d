// kiln/runtime/openmp.h — libgomp, OpenMP's runtime, opened on first use.
//
// kiln's parallel_for (runtime/thread_pool.h) runs on libgomp's thread team, the team oneDNN's
// convolutions use too. libkiln does not link libgomp: it opens it on the first parallel call
// (or before the first library built on OpenMP is opened), so a process that never runs work on
// several threads does not load it, and kiln can choose how long the team's idle workers spin
// before libgomp reads that choice. libgomp reads it once, when it loads.
//
// Why kiln chooses: libgomp's default spins about 300,000 pauses (some 4 ms on a Sapphire Rapids
// core) after every region. On the 2-vCPU development VM a spinning worker made a whole
// `kiln run` of the MLP package take 11-13 ms against 6.5-7.7 ms with workers that sleep at once,
// while training steps (bench/bench_train.cpp) ran equally fast with 10,000 spins
// (docs/decisions/fusion-and-kernels.md, libgomp's spinning).
#pragma once

namespace kiln::rt {

// libgomp's entry points: GOMP_parallel is what `#pragma omp parallel num_threads(k)` compiles
// to (GCC's ABI since 4.9): fn(data) runs on each of the team's threads, the caller included.
struct OpenMp {
  void (*parallel)(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) = nullptr;
  int (*thread_num)() = nullptr;   // omp_get_thread_num
  int (*team_size)() = nullptr;    // omp_get_num_threads
  int (*in_parallel)() = nullptr;  // omp_in_parallel
  int (*max_threads)() = nullptr;  // omp_get_max_threads
  void (*set_num_threads)(int) = nullptr;  // omp_set_num_threads
};

// libgomp, opened on the first call (thread-safe). nullptr when it cannot be opened: parallel_for
// then runs its chunks on the calling thread (the reason is logged once on KILN_LOG=perf).
const OpenMp* openmp();

// How long the team's idle workers spin before sleeping on a futex, when the user sets neither
// OMP_WAIT_POLICY nor GOMP_SPINCOUNT (libgomp's own variables, which always win).
//   Short: 10,000 spins (about 0.13 ms here): a worker is there for the next kernel of a step.
//   Sleep: none (OMP_WAIT_POLICY=passive): for a process that makes one call and exits (`kiln
//          run`), where a spinning worker costs the process more than it saves.
enum class OpenMpWait { Short, Sleep };
// Chooses the wait before libgomp loads (the default is Short). Returns false, and changes
// nothing, once libgomp is loaded.
bool set_openmp_wait(OpenMpWait wait);

}  // namespace kiln::rt
