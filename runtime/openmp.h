// kiln/runtime/openmp.h — libgomp, OpenMP's runtime, opened on first use.
//
// kiln's parallel_for (runtime/thread_pool.h) runs on libgomp's thread team, the team oneDNN's
// convolutions use too. libkiln does not link libgomp: it opens it on the first parallel call
// (or before the first library built on OpenMP is opened), so a process that never runs work on
// several threads does not load it, and kiln can choose how long the team's idle workers spin
// before libgomp reads that choice. libgomp reads it once, when it loads.
//
// Why kiln chooses: libgomp's default spins about 300,000 pauses (some 4 ms on a Sapphire Rapids
// core) after every region. On the 2-vCPU development VM a worker spinning that long made a whole
// `kiln run` of the MLP package take 11-13 ms against 6.6-6.7 ms with 10,000 spins and bound
// threads, while training steps (bench/bench_train.cpp) ran equally fast with 10,000 spins
// (docs/decisions/fusion-and-kernels.md, libgomp opened at run time).
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
// then runs its chunks on the calling thread, and a warning says why, once. Opening it sets and
// removes variables in the environment (below): a program with threads of its own that read
// the environment calls openmp() before starting them.
const OpenMp* openmp();

// How libgomp's team behaves. libgomp reads it once, when it loads; the user's own libgomp
// variables always win over either field.
struct OpenMpPolicy {
  // Pauses an idle worker spins before it sleeps on a futex (GOMP_SPINCOUNT; kept unless the
  // user sets it or OMP_WAIT_POLICY). 10,000 is about 0.13 ms here: a worker is still there for
  // the next kernel of a step. Fewer is not better on a VM: a worker woken from its sleep was
  // put on the waking thread's CPU, so the region ran on one CPU (runtime/openmp.cpp).
  int spin_count = 10000;
  // Each of the team's threads bound to one CPU, the calling thread included (OMP_PROC_BIND=true
  // with OMP_PLACES the CPUs this thread may use, starting with the one it runs on, so that it
  // stays there and the workers take the next ones; only for a team of two or more threads, and
  // unless the user sets OMP_PROC_BIND, OMP_PLACES or GOMP_CPU_AFFINITY). The scheduler can
  // then never stack a worker on another's CPU; but the thread that first makes a parallel call
  // stays on its CPU, and threads it starts afterwards inherit that one CPU, so only a process
  // of kiln's own asks for it (`kiln run`).
  bool bind_threads = false;
};

// Chooses the policy before libgomp loads (the default is OpenMpPolicy{}). Returns false, and
// changes nothing, once libgomp is loaded.
bool set_openmp_policy(const OpenMpPolicy& policy);

}  // namespace kiln::rt
