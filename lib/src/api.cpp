// The C entry points: argument checks, plan life cycle, dispatch.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <new>

#include "avgpool/avgpool.h"
#include "dispatch.h"
#include "error.h"
#include "problem.h"
#include "reference/reference.h"

// A plan: the problem, the device it is bound to, and what each direction
// chose at creation (implementation and its configuration).
struct avgpool_plan {
  avgpool::Problem problem;
  avgpool::DeviceInfo device;
  avgpool::Choice forward;
  avgpool::Choice backward;           // impl NULL: none takes the problem
  avgpool::Decline backward_missing;  // why, then
};

namespace {

using avgpool::Problem;
using avgpool::set_error;

avgpool_status create_plan(const avgpool_params* p, const char* forward_impl, const char* backward_impl,
                           avgpool_plan** plan) {
  if (plan == nullptr) return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "plan (the out-pointer) is NULL");
  Problem problem;
  avgpool_status s = avgpool::make_problem(p, &problem);
  if (s != AVGPOOL_SUCCESS) return s;
  avgpool_plan* created = new (std::nothrow) avgpool_plan;
  if (created == nullptr) return set_error(AVGPOOL_ERROR_OUT_OF_MEMORY, "no memory for the plan");
  s = avgpool::choose(problem, avgpool::Direction::kForward, forward_impl, &created->device, &created->forward);
  if (s != AVGPOOL_SUCCESS) {
    delete created;
    return s;
  }
  // The backward runs on the forward's backend (the same memory).
  Problem same_backend = problem;
  same_backend.backend = created->forward.impl->backend;
  if (backward_impl != nullptr) {
    const avgpool::Impl* forced = avgpool::find_impl(backward_impl);
    if (forced != nullptr && forced->direction == avgpool::Direction::kBackward &&
        forced->backend != same_backend.backend) {
      const char* forward_name = created->forward.impl->name;
      delete created;
      return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT,
                       "backward_impl (\"%s\") is of backend %s, the forward (\"%s\") of backend %s: "
                       "both directions run on one backend",
                       backward_impl, avgpool::backend_name(forced->backend), forward_name,
                       avgpool::backend_name(same_backend.backend));
    }
  }
  avgpool::DeviceInfo backward_device;
  s = avgpool::choose(same_backend, avgpool::Direction::kBackward, backward_impl, &backward_device,
                      &created->backward);
  if (s != AVGPOOL_SUCCESS && backward_impl != nullptr) {
    delete created;
    if (s == AVGPOOL_ERROR_BACKEND_UNAVAILABLE || avgpool::find_impl(backward_impl) != nullptr) {
      char reason[512];  // set_error writes the buffer the message is read from
      snprintf(reason, sizeof reason, "%s", avgpool_last_error_message());
      return set_error(s == AVGPOOL_ERROR_BACKEND_UNAVAILABLE ? AVGPOOL_ERROR_INVALID_ARGUMENT : s, "%s", reason);
    }
    return s;
  }
  if (s != AVGPOOL_SUCCESS) {  // optional: the plan still serves the forward
    created->backward_missing.status = s;
    snprintf(created->backward_missing.text, sizeof created->backward_missing.text, "%s",
             avgpool_last_error_message());
    avgpool::clear_error();
  }
  created->problem = std::move(problem);
  *plan = created;
  return AVGPOOL_SUCCESS;
}

// The coordinates of dense src (grad_input) element index, in q's layout.
void src_coords(const Problem& q, int64_t index, int64_t* n, int64_t* c, int64_t* y, int64_t* x) {
  if (q.layout == AVGPOOL_LAYOUT_NCHW) {
    *x = index % q.w; index /= q.w;
    *y = index % q.h; index /= q.h;
    *c = index % q.c; *n = index / q.c;
  } else {
    *c = index % q.c; index /= q.c;
    *x = index % q.w; index /= q.w;
    *y = index % q.h; *n = index / q.h;
  }
}

bool ranges_overlap(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes) {
  const uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
  return a0 < b0 + (uintptr_t)b_bytes && b0 < a0 + (uintptr_t)a_bytes;
}

// The checks every execution makes before the implementation runs: NULL,
// element alignment, overlap. On failure nothing is written.
avgpool_status run_checked(const Problem& q, const avgpool::Choice& choice, const char* in_name, const void* in,
                           int64_t in_elements, const char* out_name, void* out, int64_t out_elements,
                           void* stream) {
  if (q.dst_elements == 0) return AVGPOOL_SUCCESS;  // n == 0: nothing to read or write
  if (in == nullptr) return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "%s is NULL", in_name);
  if (out == nullptr) return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "%s is NULL", out_name);
  const uintptr_t es = (uintptr_t)q.element_size;
  if ((uintptr_t)in % es != 0 || (uintptr_t)out % es != 0) {
    const bool in_bad = (uintptr_t)in % es != 0;
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "%s (%p) is not aligned to the %s element size (%lld bytes)",
                     in_bad ? in_name : out_name, in_bad ? in : (const void*)out, avgpool::dtype_name(q.dtype),
                     (long long)q.element_size);
  }
  if (ranges_overlap(in, in_elements * q.element_size, out, out_elements * q.element_size))
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "%s (%p, %lld bytes) and %s (%p, %lld bytes) overlap", in_name,
                     in, (long long)(in_elements * q.element_size), out_name, (void*)out,
                     (long long)(out_elements * q.element_size));
  return avgpool::run_choice(choice, in, out, stream);
}

// The sampled reference values of both directions: checks the arguments
// (tensor_name names the host tensor), then values[i] = value(index i) for
// indices in [0, limit).
template <typename Value>
avgpool_status sample_reference(const avgpool_plan* plan, const void* tensor, const char* tensor_name, int64_t count,
                                 const int64_t* indices, double* values, int64_t Problem::*limit, Value value) {
  avgpool::clear_error();
  if (plan == nullptr) return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "plan is NULL");
  if (count < 0) return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "count (%lld) is negative", (long long)count);
  if (count == 0) return AVGPOOL_SUCCESS;
  if (tensor == nullptr || indices == nullptr || values == nullptr)
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "%s is NULL",
                     tensor == nullptr ? tensor_name : indices == nullptr ? "indices" : "values");
  const Problem& q = plan->problem;
  for (int64_t i = 0; i < count; ++i)
    if (indices[i] < 0 || indices[i] >= q.*limit)
      return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "indices[%lld] (%lld) is outside [0, %lld)",
                       (long long)i, (long long)indices[i], (long long)(q.*limit));
  for (int64_t i = 0; i < count; ++i) values[i] = value(q, indices[i]);
  return AVGPOOL_SUCCESS;
}

// avgpool_forward / avgpool_backward: a plan for one call. Deleting it
// before an asynchronous launch finishes is safe: kernels take their
// parameters by value.
template <typename Run> avgpool_status one_call(const avgpool_params* p, Run run) {
  avgpool::clear_error();
  avgpool_plan* plan = nullptr;
  avgpool_status s = create_plan(p, nullptr, nullptr, &plan);
  if (s != AVGPOOL_SUCCESS) return s;
  s = run(plan);
  delete plan;
  return s;
}

}  // namespace

extern "C" {

AVGPOOL_API unsigned avgpool_version_number(void) { return AVGPOOL_VERSION_NUMBER; }
AVGPOOL_API const char* avgpool_version_string(void) { return AVGPOOL_VERSION_STRING; }

AVGPOOL_API avgpool_status avgpool_params_init(avgpool_params* p) {
  avgpool::clear_error();
  if (p == nullptr) return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "params is NULL");
  memset(p, 0, sizeof *p);
  p->struct_size = sizeof *p;
  p->n = p->c = p->h = p->w = 1;
  p->kernel_h = p->kernel_w = 1;
  p->count_include_pad = 1;
  p->dtype = AVGPOOL_DTYPE_F32;
  p->layout = AVGPOOL_LAYOUT_NCHW;
  p->backend = AVGPOOL_BACKEND_AUTO;
  p->numerics = AVGPOOL_NUMERICS_FAST;
  return AVGPOOL_SUCCESS;
}

AVGPOOL_API avgpool_status avgpool_plan_create(const avgpool_params* p, avgpool_plan** plan) {
  avgpool::clear_error();
  return create_plan(p, nullptr, nullptr, plan);
}

AVGPOOL_API avgpool_status avgpool_plan_create_with_impl(const avgpool_params* p,
                                                         const char* impl_name,
                                                         avgpool_plan** plan) {
  avgpool::clear_error();
  if (impl_name == nullptr) return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "impl_name is NULL");
  return create_plan(p, impl_name, nullptr, plan);
}

AVGPOOL_API avgpool_status avgpool_plan_create_with_impls(const avgpool_params* p, const char* forward_impl,
                                                          const char* backward_impl, avgpool_plan** plan) {
  avgpool::clear_error();
  return create_plan(p, forward_impl, backward_impl, plan);
}

AVGPOOL_API avgpool_status avgpool_plan_destroy(avgpool_plan* plan) {
  avgpool::clear_error();
  delete plan;
  return AVGPOOL_SUCCESS;
}

AVGPOOL_API avgpool_status avgpool_plan_output_dims(const avgpool_plan* plan, int64_t dims[4]) {
  avgpool::clear_error();
  if (plan == nullptr) return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "plan is NULL");
  if (dims == nullptr) return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "dims is NULL");
  const Problem& q = plan->problem;
  dims[0] = q.n; dims[1] = q.c; dims[2] = q.oh; dims[3] = q.ow;
  return AVGPOOL_SUCCESS;
}

AVGPOOL_API avgpool_status avgpool_plan_sizes(const avgpool_plan* plan, int64_t* src_elements,
                                              int64_t* dst_elements) {
  avgpool::clear_error();
  if (plan == nullptr) return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "plan is NULL");
  if (src_elements == nullptr || dst_elements == nullptr)
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "%s is NULL",
                     src_elements == nullptr ? "src_elements" : "dst_elements");
  *src_elements = plan->problem.src_elements;
  *dst_elements = plan->problem.dst_elements;
  return AVGPOOL_SUCCESS;
}

AVGPOOL_API avgpool_status avgpool_plan_impl_name(const avgpool_plan* plan, const char** name) {
  avgpool::clear_error();
  if (plan == nullptr) return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "plan is NULL");
  if (name == nullptr) return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "name is NULL");
  *name = plan->forward.impl->name;
  return AVGPOOL_SUCCESS;
}

AVGPOOL_API avgpool_status avgpool_plan_backward_impl_name(const avgpool_plan* plan, const char** name) {
  avgpool::clear_error();
  if (plan == nullptr) return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "plan is NULL");
  if (name == nullptr) return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "name is NULL");
  if (plan->backward.impl == nullptr)
    return set_error(plan->backward_missing.status, "%s", plan->backward_missing.text);
  *name = plan->backward.impl->name;
  return AVGPOOL_SUCCESS;
}

AVGPOOL_API avgpool_status avgpool_plan_execute(const avgpool_plan* plan, const void* src,
                                                void* dst, void* stream) {
  avgpool::clear_error();
  if (plan == nullptr) return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "plan is NULL");
  const Problem& q = plan->problem;
  return run_checked(q, plan->forward, "src", src, q.src_elements, "dst", dst, q.dst_elements, stream);
}

AVGPOOL_API avgpool_status avgpool_plan_backward(const avgpool_plan* plan, const void* grad_output,
                                                 void* grad_input, void* stream) {
  avgpool::clear_error();
  if (plan == nullptr) return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "plan is NULL");
  if (plan->backward.impl == nullptr)
    return set_error(plan->backward_missing.status, "%s", plan->backward_missing.text);
  const Problem& q = plan->problem;
  return run_checked(q, plan->backward, "grad_output", grad_output, q.dst_elements, "grad_input", grad_input,
                     q.src_elements, stream);
}

AVGPOOL_API avgpool_status avgpool_forward(const avgpool_params* p, const void* src, void* dst,
                                           void* stream) {
  return one_call(p, [&](const avgpool_plan* plan) { return avgpool_plan_execute(plan, src, dst, stream); });
}

AVGPOOL_API avgpool_status avgpool_backward(const avgpool_params* p, const void* grad_output, void* grad_input,
                                            void* stream) {
  return one_call(p, [&](const avgpool_plan* plan) {
    return avgpool_plan_backward(plan, grad_output, grad_input, stream);
  });
}

AVGPOOL_API avgpool_status avgpool_reference_outputs(const avgpool_plan* plan, const void* src_host,
                                                     int64_t count, const int64_t* indices,
                                                     double* values) {
  return sample_reference(plan, src_host, "src_host", count, indices, values, &Problem::dst_elements,
                          [&](const Problem& q, int64_t index) {
                            int64_t n, c, oy, ox;
                            q.dst_coords(index, &n, &c, &oy, &ox);
                            return avgpool::reference::output_value(q, src_host, n, c, oy, ox);
                          });
}

AVGPOOL_API avgpool_status avgpool_reference_grad_inputs(const avgpool_plan* plan, const void* grad_output_host,
                                                         int64_t count, const int64_t* indices, double* values) {
  return sample_reference(plan, grad_output_host, "grad_output_host", count, indices, values, &Problem::src_elements,
                          [&](const Problem& q, int64_t index) {
                            int64_t n, c, y, x;
                            src_coords(q, index, &n, &c, &y, &x);
                            return avgpool::reference::grad_input_value(q, grad_output_host, n, c, y, x);
                          });
}

AVGPOOL_API avgpool_status avgpool_impl_count(int64_t* count) {
  avgpool::clear_error();
  if (count == nullptr) return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "count is NULL");
  *count = (int64_t)avgpool::impl_count();
  return AVGPOOL_SUCCESS;
}

AVGPOOL_API avgpool_status avgpool_impl_name(int64_t index, const char** name) {
  avgpool::clear_error();
  const int64_t count = (int64_t)avgpool::impl_count();
  if (name == nullptr) return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "name is NULL");
  if (index < 0 || index >= count)
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "index (%lld) must be in [0, %lld)",
                     (long long)index, (long long)count);
  *name = avgpool::impl_at((size_t)index)->name;
  return AVGPOOL_SUCCESS;
}

AVGPOOL_API avgpool_status avgpool_impl_is_backward(int64_t index, int* is_backward) {
  avgpool::clear_error();
  const int64_t count = (int64_t)avgpool::impl_count();
  if (is_backward == nullptr) return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "is_backward is NULL");
  if (index < 0 || index >= count)
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "index (%lld) must be in [0, %lld)", (long long)index,
                     (long long)count);
  *is_backward = avgpool::impl_at((size_t)index)->direction == avgpool::Direction::kBackward;
  return AVGPOOL_SUCCESS;
}

AVGPOOL_API avgpool_status avgpool_impl_accepts(const char* impl_name, const avgpool_params* p) {
  avgpool::clear_error();
  if (impl_name == nullptr) return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "impl_name is NULL");
  Problem problem;
  avgpool_status s = avgpool::make_problem(p, &problem);
  if (s != AVGPOOL_SUCCESS) return s;
  const avgpool::Impl* impl = avgpool::find_impl(impl_name);
  if (impl == nullptr)
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "impl_name (\"%s\") names no implementation", impl_name);
  avgpool::DeviceInfo device;
  avgpool::Choice choice;
  return avgpool::choose(problem, impl->direction, impl_name, &device, &choice);
}

}  // extern "C"
