/*
 * avgpool: 2-D average pooling with the exact semantics of PyTorch's
 * nn.AvgPool2d, on CUDA, OpenMP CPU and a plain reference backend.
 *
 * The C API is stable: status values and enum values are pinned forever,
 * the parameter struct is versioned by its first field, and every object is
 * opaque. Every function returns an avgpool_status; on failure
 * avgpool_last_error_message() says, for the calling thread, what was wrong.
 * A call that fails writes nothing to its outputs (out-parameters and dst).
 */
#ifndef AVGPOOL_AVGPOOL_H
#define AVGPOOL_AVGPOOL_H

#include <stddef.h>
#include <stdint.h>

/* ---- export macro: the only one; everything else is hidden ------------- */
#if defined(AVGPOOL_STATIC)
#  define AVGPOOL_API
#elif defined(_WIN32)
#  if defined(AVGPOOL_BUILDING)
#    define AVGPOOL_API __declspec(dllexport)
#  else
#    define AVGPOOL_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__)
#  define AVGPOOL_API __attribute__((visibility("default")))
#else
#  define AVGPOOL_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ------------------------------------------------------------ */
/* The one source of the version: the build reads these three lines (the
 * CMake project version, the library's soname, avgpoolConfigVersion.cmake,
 * avgpool.pc), and the rest of the header derives from them. */
#define AVGPOOL_VERSION_MAJOR 0
#define AVGPOOL_VERSION_MINOR 1
#define AVGPOOL_VERSION_PATCH 0
#define AVGPOOL_VERSION_NUMBER \
  (AVGPOOL_VERSION_MAJOR * 10000 + AVGPOOL_VERSION_MINOR * 100 + AVGPOOL_VERSION_PATCH)
#define AVGPOOL_STRINGIFY_(x) #x
#define AVGPOOL_STRINGIFY(x) AVGPOOL_STRINGIFY_(x)
#define AVGPOOL_VERSION_STRING                                        \
  AVGPOOL_STRINGIFY(AVGPOOL_VERSION_MAJOR) "." AVGPOOL_STRINGIFY(AVGPOOL_VERSION_MINOR) "." \
      AVGPOOL_STRINGIFY(AVGPOOL_VERSION_PATCH) /* "0.1.0" */

/* The library's version, to compare with the header's AVGPOOL_VERSION_NUMBER. */
AVGPOOL_API unsigned avgpool_version_number(void);
AVGPOOL_API const char* avgpool_version_string(void);

/* ---- status (values pinned forever) ------------------------------------ */
typedef enum avgpool_status {
  AVGPOOL_SUCCESS = 0,
  AVGPOOL_ERROR_INVALID_ARGUMENT = 1,    /* bad input: the message names it   */
  AVGPOOL_ERROR_UNSUPPORTED = 2,         /* valid, but no implementation here */
  AVGPOOL_ERROR_OUT_OF_MEMORY = 3,
  AVGPOOL_ERROR_BACKEND_UNAVAILABLE = 4, /* not compiled in, or no device     */
  AVGPOOL_ERROR_DEVICE = 5,              /* the device reported an error      */
  AVGPOOL_ERROR_INTERNAL = 6
} avgpool_status;

/* A static, never-NULL name for a status ("invalid argument", ...). */
AVGPOOL_API const char* avgpool_status_string(avgpool_status status);

/* What went wrong in the calling thread's last failed call, e.g.
 * "padding_h (2) must be at most kernel_h / 2 (1)"; "" after a success.
 * The pointer stays valid until the thread's next avgpool call. */
AVGPOOL_API const char* avgpool_last_error_message(void);

/* ---- enums (values pinned forever) -------------------------------------- */
typedef enum avgpool_dtype {
  AVGPOOL_DTYPE_F32 = 0,
  AVGPOOL_DTYPE_F16 = 1,  /* IEEE binary16 */
  AVGPOOL_DTYPE_BF16 = 2,
  AVGPOOL_DTYPE_F64 = 3
} avgpool_dtype;

/* Both layouts are dense (packed, no padding between elements or rows). */
typedef enum avgpool_layout {
  AVGPOOL_LAYOUT_NCHW = 0,
  AVGPOOL_LAYOUT_NHWC = 1   /* PyTorch's channels_last */
} avgpool_layout;

typedef enum avgpool_backend {
  AVGPOOL_BACKEND_AUTO = 0,      /* CUDA when a device is usable, else CPU */
  AVGPOOL_BACKEND_REFERENCE = 1, /* the spec in code: host memory          */
  AVGPOOL_BACKEND_CPU = 2,       /* OpenMP: host memory                    */
  AVGPOOL_BACKEND_CUDA = 3       /* device memory, asynchronous on stream  */
} avgpool_backend;

typedef enum avgpool_numerics {
  /* The fastest result within the float32 summation bound: a float32 (or
   * wider) sum in any order, one division, one rounding. */
  AVGPOOL_NUMERICS_FAST = 0,
  /* Bitwise what PyTorch returns: float accumulator (double for f64), rows
   * then columns left to right, one true division. */
  AVGPOOL_NUMERICS_PYTORCH = 1
} avgpool_numerics;

/* A static, never-NULL short name of an enum value, as the command-line tool
 * and the messages spell it ("f32", "nhwc", "cuda", "pytorch"); "?" for a
 * value outside the enum. */
AVGPOOL_API const char* avgpool_dtype_name(avgpool_dtype dtype);
AVGPOOL_API const char* avgpool_layout_name(avgpool_layout layout);
AVGPOOL_API const char* avgpool_backend_name(avgpool_backend backend);
AVGPOOL_API const char* avgpool_numerics_name(avgpool_numerics numerics);

/* ---- parameters (versioned: struct_size first) -------------------------- */
typedef struct avgpool_params {
  size_t struct_size;          /* sizeof(avgpool_params): set by avgpool_params_init */
  int64_t n, c, h, w;          /* input dims; n may be 0, the rest >= 1 */
  int64_t kernel_h, kernel_w;  /* >= 1 */
  int64_t stride_h, stride_w;  /* >= 1; both 0 means "equal to the kernel" */
  int64_t padding_h, padding_w;/* 0 <= padding <= kernel / 2 */
  int32_t ceil_mode;           /* 0 or 1 */
  int32_t count_include_pad;   /* 0 or 1 (PyTorch's default is 1) */
  int64_t divisor_override;    /* 0 = none, else > 0 */
  avgpool_dtype dtype;
  avgpool_layout layout;
  avgpool_backend backend;
  avgpool_numerics numerics;
} avgpool_params;

/* Fills p with PyTorch's defaults: kernel 1x1, stride = kernel, padding 0,
 * ceil_mode 0, count_include_pad 1, no divisor override, f32, NCHW, AUTO,
 * FAST; dims 1x1x1x1. */
AVGPOOL_API avgpool_status avgpool_params_init(avgpool_params* p);

/* ---- plan ---------------------------------------------------------------- */
typedef struct avgpool_plan avgpool_plan;

/* Validates p, computes the output size and windows once, and picks, by the
 * backend's AUTO policy, the forward implementation for the problem and the
 * backward one (on the same backend; a problem no backward implementation
 * takes still gets a plan, and avgpool_plan_backward says why). Each
 * implementation decides its configuration here, once. A CUDA plan is bound
 * to the device current at creation: it runs there whatever device is
 * current when it executes, and refuses pointers and streams of another. */
AVGPOOL_API avgpool_status avgpool_plan_create(const avgpool_params* p, avgpool_plan** plan);

/* As avgpool_plan_create, but forces the implementation named impl_name
 * (see avgpool_impl_name); fails with UNSUPPORTED if it declines. */
AVGPOOL_API avgpool_status avgpool_plan_create_with_impl(const avgpool_params* p,
                                                         const char* impl_name,
                                                         avgpool_plan** plan);

/* As avgpool_plan_create with either direction's implementation forced by
 * name (NULL = AUTO); fails with UNSUPPORTED if a forced one declines and
 * INVALID_ARGUMENT if the two are of different backends. */
AVGPOOL_API avgpool_status avgpool_plan_create_with_impls(const avgpool_params* p,
                                                          const char* forward_impl,
                                                          const char* backward_impl,
                                                          avgpool_plan** plan);

/* NULL is a no-op. */
AVGPOOL_API avgpool_status avgpool_plan_destroy(avgpool_plan* plan);

/* dims[4] = output N, C, Ho, Wo (always in this order, whatever the layout). */
AVGPOOL_API avgpool_status avgpool_plan_output_dims(const avgpool_plan* plan, int64_t dims[4]);

/* Element counts of src and dst. */
AVGPOOL_API avgpool_status avgpool_plan_sizes(const avgpool_plan* plan, int64_t* src_elements,
                                              int64_t* dst_elements);

/* The chosen forward implementation, e.g. "cuda:nchw_row_stream"; static
 * storage. Implementation names are for diagnostics and tests: they are not
 * stable across versions. */
AVGPOOL_API avgpool_status avgpool_plan_impl_name(const avgpool_plan* plan, const char** name);

/* The chosen backward implementation; UNSUPPORTED (with the reason) when no
 * backward implementation takes the plan's problem. */
AVGPOOL_API avgpool_status avgpool_plan_backward_impl_name(const avgpool_plan* plan, const char** name);

/* Runs the plan: src and dst are dense tensors of the plan's dtype and
 * layout, in host memory for the reference and CPU backends and in device
 * memory for CUDA. stream is a cudaStream_t (NULL = the default stream) and
 * is ignored on the host. CUDA execution is asynchronous on stream; errors
 * of the launch are reported, errors of the kernel surface at the caller's
 * next synchronization. src and dst must not overlap. */
AVGPOOL_API avgpool_status avgpool_plan_execute(const avgpool_plan* plan, const void* src,
                                                void* dst, void* stream);

/* One call for the simple case: create a plan, execute it, destroy it. */
AVGPOOL_API avgpool_status avgpool_forward(const avgpool_params* p, const void* src, void* dst,
                                           void* stream);

/* The gradient: grad_input (the plan's input dims, src_elements) from
 * grad_output (its output dims, dst_elements), both of the plan's dtype and
 * layout, in the same memory as the forward's tensors; asynchronous on
 * stream for CUDA. Overwrites all of grad_input (elements no window covers
 * become 0). grad_output and grad_input must not overlap. */
AVGPOOL_API avgpool_status avgpool_plan_backward(const avgpool_plan* plan, const void* grad_output,
                                                 void* grad_input, void* stream);

/* One call: create a plan, run its backward, destroy it. */
AVGPOOL_API avgpool_status avgpool_backward(const avgpool_params* p, const void* grad_output,
                                            void* grad_input, void* stream);

/* ---- verification --------------------------------------------------------- */
/* Computes selected outputs of plan with the reference, on the host, in the
 * plan's numerics: values[i] = the output at dense dst element index
 * indices[i] (in the plan's layout), rounded to the plan's dtype, returned
 * as a double. src_host is the plan's input in host memory. Lets a caller
 * check any backend on a sample of a tensor too large to recompute. */
AVGPOOL_API avgpool_status avgpool_reference_outputs(const avgpool_plan* plan, const void* src_host,
                                                     int64_t count, const int64_t* indices,
                                                     double* values);

/* The backward counterpart: values[i] = grad_input at dense element index
 * indices[i] (the plan's layout), computed by the reference from
 * grad_output_host, rounded to the plan's dtype, as a double. */
AVGPOOL_API avgpool_status avgpool_reference_grad_inputs(const avgpool_plan* plan,
                                                         const void* grad_output_host, int64_t count,
                                                         const int64_t* indices, double* values);

/* ---- implementations: list them, test whether one accepts -------------- */
/* All implementations compiled in, by backend (CUDA, CPU, reference). */
AVGPOOL_API avgpool_status avgpool_impl_count(int64_t* count);
AVGPOOL_API avgpool_status avgpool_impl_name(int64_t index, const char** name);

/* *is_backward = 1 for a backward implementation, 0 for a forward one. */
AVGPOOL_API avgpool_status avgpool_impl_is_backward(int64_t index, int* is_backward);

/* SUCCESS if the implementation named (either direction) accepts p; UNSUPPORTED (or
 * BACKEND_UNAVAILABLE) with a message if not; INVALID_ARGUMENT if p is bad
 * or no implementation has that name. */
AVGPOOL_API avgpool_status avgpool_impl_accepts(const char* impl_name, const avgpool_params* p);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* AVGPOOL_AVGPOOL_H */
