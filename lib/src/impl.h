// An implementation is a plain struct of function pointers (ggml's backend
// style). Each backend exports an ordered array of them; lib/src/impl_list.cpp
// concatenates the arrays: CUDA, then CPU, then the reference.
#pragma once

#include <stddef.h>

#include <vector>

#include "avgpool/avgpool.h"
#include "problem.h"

namespace avgpool {

struct Impl {
  // "backend:variant", e.g. "cuda:stride_eq_kernel"; static storage.
  const char* name;
  avgpool_backend backend;
  // SUCCESS if this implementation computes the problem; otherwise
  // UNSUPPORTED or BACKEND_UNAVAILABLE with set_error() saying why.
  avgpool_status (*accepts)(const Problem& problem);
  // Computes dst from src. The caller has checked the pointers (non-NULL,
  // element-aligned, non-overlapping) and that the problem has elements.
  // CUDA implementations check that the pointers are device memory, launch
  // on stream (a cudaStream_t) and never synchronize.
  avgpool_status (*execute)(const Problem& problem, const void* src, void* dst, void* stream);
  // Optional (NULL = never): true when AUTO dispatch should pass this
  // implementation over for the problem because a later one that accepts it
  // is faster there. Forcing the implementation by name is unaffected.
  bool (*auto_skip)(const Problem& problem) = nullptr;
};

// A backend's implementations, fastest first.
struct ImplList {
  const Impl* const* items;
  size_t count;
};

ImplList reference_impls();
ImplList cpu_impls();   // backends/cpu (empty when not built)
ImplList cuda_impls();  // backends/cuda (empty when not built)

// All implementations in dispatch order: CUDA, CPU, reference.
const std::vector<const Impl*>& all_impls();

}  // namespace avgpool
