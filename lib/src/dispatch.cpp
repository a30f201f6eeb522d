#include "dispatch.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

namespace avgpool {

avgpool_status decline(Decline* why, avgpool_status status, const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(why->text, sizeof why->text, format, args);
  va_end(args);
  why->status = status;
  return status;
}

avgpool_status host_device(DeviceInfo* info, Decline*) {
  *info = DeviceInfo{};
  return AVGPOOL_SUCCESS;
}

#if !defined(AVGPOOL_WITH_CUDA)
const Backend* cuda_backend() { return nullptr; }
#endif

size_t backends(const Backend** out, size_t cap) {
  size_t n = 0;
  if (const Backend* cuda = cuda_backend(); cuda != nullptr && n < cap) out[n++] = cuda;
  if (n < cap) out[n++] = &cpu_backend();
  if (n < cap) out[n++] = &reference_backend();
  return n;
}

size_t impl_count() {
  const Backend* list[4];
  size_t total = 0;
  for (size_t b = 0, nb = backends(list, 4); b < nb; ++b) total += list[b]->count;
  return total;
}

const Impl* impl_at(size_t index) {
  const Backend* list[4];
  for (size_t b = 0, nb = backends(list, 4); b < nb; ++b) {
    if (index < list[b]->count) return list[b]->impls[index];
    index -= list[b]->count;
  }
  return nullptr;
}

const Impl* find_impl(const char* name) {
  for (size_t i = 0, n = impl_count(); i < n; ++i)
    if (strcmp(impl_at(i)->name, name) == 0) return impl_at(i);
  return nullptr;
}

const Backend* backend_of(avgpool_backend id) {
  const Backend* list[4];
  for (size_t b = 0, nb = backends(list, 4); b < nb; ++b)
    if (list[b]->id == id) return list[b];
  return nullptr;
}

namespace {

constexpr size_t kMaxCandidates = 32;

bool aligned_for_any(const Config& c, int64_t element_size) {
  return c.src_align <= element_size && c.dst_align <= element_size;
}

// The first implementation in backend's AUTO order, other than the choice,
// whose configuration takes any element-aligned pointers.
void choose_fallback(const Problem& q, Direction direction, const Backend& backend, const DeviceInfo& device,
                     Choice* choice) {
  const Impl* order[kMaxCandidates];
  const size_t n = backend.auto_order(q, device, direction, order, kMaxCandidates);
  for (size_t i = 0; i < n; ++i) {
    if (order[i] == choice->impl) continue;
    ConfigPtr config;
    Decline why;
    if (order[i]->init(q, device, &config, &why) == AVGPOOL_SUCCESS &&
        aligned_for_any(*config, q.element_size)) {
      choice->fallback = order[i];
      choice->fallback_config = std::move(config);
      return;
    }
  }
}

}  // namespace

// Measured (H200, 2026-12-04, forward, AUTO on the NCHW view against AUTO
// on the NHWC problem, the same buffers, device time, best of two): over
// the 120 one-channel NHWC configurations of the sweep seeds 1000-1999,
// 1.10x faster in fast numerics and 1.09x in pytorch numerics, 75 faster by
// more than 3 %, 18 slower (worst 446845x1x24x8 k2 s4x2 bf16 0.82x, still
// 2.3x PyTorch); none below 0.97x PyTorch either way. The backward keeps
// its layout (not measured).
Problem auto_view(const Problem& q, Direction direction) {
  Problem view = q;
  if (direction == Direction::kForward && q.layout == AVGPOOL_LAYOUT_NHWC && q.c == 1)
    view.layout = AVGPOOL_LAYOUT_NCHW;
  return view;
}

avgpool_status choose_in_backend(const Problem& problem, Direction direction, const Backend& backend,
                                 const DeviceInfo& device, Choice* choice_out, Decline* why) {
  Choice choice;
  choice.problem = auto_view(problem, direction);
  const Problem& q = choice.problem;
  const Impl* order[kMaxCandidates];
  const size_t n = backend.auto_order(q, device, direction, order, kMaxCandidates);
  if (n == 0)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "backend %s has no %s implementation for this problem",
                   backend_name(backend.id), direction == Direction::kForward ? "forward" : "backward");
  for (size_t i = 0; i < n && choice.impl == nullptr; ++i)
    if (order[i]->init(q, device, &choice.config, why) == AVGPOOL_SUCCESS) choice.impl = order[i];
  if (choice.impl == nullptr) return why->status;
  if (!aligned_for_any(*choice.config, q.element_size)) choose_fallback(q, direction, backend, device, &choice);
  *choice_out = std::move(choice);
  return AVGPOOL_SUCCESS;
}

avgpool_status choose(const Problem& problem, Direction direction, const char* impl_name, DeviceInfo* device_out,
                      Choice* choice_out) {
  // A batch of 0 has nothing to compute (execution returns before any
  // implementation runs), but implementations size grids and work units
  // from it: they decide for a batch of 1 instead, never dividing by 0.
  Problem batch_of_one;
  if (problem.n == 0) batch_of_one = problem.with_batch(1);
  const Problem& q = problem.n == 0 ? batch_of_one : problem;
  Choice choice;
  DeviceInfo device;
  Decline why;
  const Backend* backend = nullptr;
  if (impl_name != nullptr) {
    const Impl* impl = find_impl(impl_name);
    if (impl == nullptr)
      return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "impl_name (\"%s\") names no implementation", impl_name);
    if (impl->direction != direction)
      return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "impl_name (\"%s\") is a %s implementation", impl_name,
                       impl->direction == Direction::kForward ? "forward" : "backward");
    backend = backend_of(impl->backend);
    if (backend->device(&device, &why) != AVGPOOL_SUCCESS ||
        impl->init(q, device, &choice.config, &why) != AVGPOOL_SUCCESS)
      return set_error(why.status, "%s", why.text);
    choice.impl = impl;
    choice.problem = problem;
  } else {
    const Backend* list[4];
    bool any_of_backend = false;
    for (size_t b = 0, nb = backends(list, 4); b < nb && choice.impl == nullptr; ++b) {
      if (q.backend != AVGPOOL_BACKEND_AUTO && list[b]->id != q.backend) continue;
      any_of_backend = true;
      if (list[b]->device(&device, &why) != AVGPOOL_SUCCESS) continue;
      if (choose_in_backend(q, direction, *list[b], device, &choice, &why) == AVGPOOL_SUCCESS) backend = list[b];
    }
    if (!any_of_backend)
      return set_error(AVGPOOL_ERROR_BACKEND_UNAVAILABLE, "backend %s is not compiled into this build",
                       backend_name(q.backend));
    if (choice.impl == nullptr) return set_error(why.status, "%s", why.text);
    choice.problem = auto_view(problem, direction);  // the batch of 0, where q had 1
  }
  if (impl_name != nullptr && !aligned_for_any(*choice.config, q.element_size))
    choose_fallback(q, direction, *backend, device, &choice);
  *device_out = device;
  *choice_out = std::move(choice);
  return AVGPOOL_SUCCESS;
}

avgpool_status run_choice(const Choice& choice, const void* src, void* dst, void* stream) {
  const Problem& q = choice.problem;
  const Config& c = *choice.config;
  const bool aligned = (uintptr_t)src % (uintptr_t)c.src_align == 0 && (uintptr_t)dst % (uintptr_t)c.dst_align == 0;
  if (aligned) return choice.impl->execute(q, c, src, dst, stream);
  if (choice.fallback == nullptr)
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT,
                     "%s needs src aligned to %lld bytes and dst to %lld (src %p, dst %p), and no other "
                     "implementation of its backend takes this problem",
                     choice.impl->name, (long long)c.src_align, (long long)c.dst_align, src, dst);
  return choice.fallback->execute(q, *choice.fallback_config, src, dst, stream);
}

}  // namespace avgpool
