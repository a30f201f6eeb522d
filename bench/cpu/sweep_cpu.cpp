// The CPU sweep's measuring program (bench/cpu/sweep.py drives it).
//
// Reads pooling configurations from stdin, one a line of key=value fields
// as bench/sweeplib/configs.py writes them:
//   n=2 c=64 h=127 w=128 kh=5 kw=3 sh=5 sw=5 ph=2 pw=1 ceil=0 include_pad=0
//   divisor=0 dtype=f32 layout=nchw   (other keys are ignored)
// and writes, for each, one line of JSON to stdout: the implementations
// avgpool's CPU backend chose (AUTO) in fast and pytorch numerics and the
// milliseconds per call (the fastest round; "_median_ms" the median) of
//   read   a STREAM-style read of the input      (memory_passes.h)
//   copy   a copy of the input (read + write)
//   fast, pytorch   avgpool_plan_execute, each numerics
//   dnnl   oneDNN's pooling in the same layout and dtype, where it has one
//          (dnnl_pool.h; "dnnl_refusal" says why not)
//   loop   the plain OpenMP loop, same layout and dtype (plain_loop.h)
// all on the same input (uniform in [-1, 1)). In every round each
// contender runs, in an order that rotates from round to round, enough
// calls back to back to last about a millisecond (so that its threads stay
// awake, as between a network's layers); a contender runs budget / (its
// warm-up time) rounds, at least 1 and at most --max-rounds. The fastest
// round is the figure: on a shared VM, other load and stolen time only
// ever add to a round (single calls of small problems were seen taking
// whole multiples of 8 ms under load). "check_err" is the largest difference of the fast result
// and the plain loop's from the pytorch-numerics result, over up to 2^18
// sampled elements; "check_tol" the float32 summation bound it is held to.
//
// usage: avgpool_sweep_cpu [--budget-ms MS (default 600)] [--max-rounds R (default 15)] < configs
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "avgpool/avgpool.h"
#include "dnnl_pool.h"
#include "memory_passes.h"
#include "plain_loop.h"
#include "tensor_util.h"

namespace {

using avgpool_bench::Buffer;
using avgpool_bench::median;
using avgpool_bench::now_ms;

volatile float g_sink;  // keeps the read pass's result alive

struct Options {
  double budget_ms = 600;
  int max_rounds = 15;
};

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    if ((unsigned char)ch < 0x20) ch = ' ';
    out += ch;
  }
  return out + "\"";
}

// The configuration line as avgpool_params (CPU backend, AUTO); false with
// a message when a field is missing or unreadable.
bool parse_config(const std::string& line, avgpool_params* p, std::string* error) {
  std::map<std::string, std::string> kv;
  std::istringstream in(line);
  std::string token;
  while (in >> token) {
    const size_t eq = token.find('=');
    if (eq != std::string::npos) kv[token.substr(0, eq)] = token.substr(eq + 1);
  }
  avgpool_params_init(p);
  p->backend = AVGPOOL_BACKEND_CPU;
  const std::pair<const char*, int64_t*> ints[] = {
      {"n", &p->n},           {"c", &p->c},           {"h", &p->h},          {"w", &p->w},
      {"kh", &p->kernel_h},   {"kw", &p->kernel_w},   {"sh", &p->stride_h},  {"sw", &p->stride_w},
      {"ph", &p->padding_h},  {"pw", &p->padding_w},  {"divisor", &p->divisor_override}};
  for (const auto& f : ints) {
    auto it = kv.find(f.first);
    if (it == kv.end()) {
      *error = std::string("missing ") + f.first;
      return false;
    }
    *f.second = strtoll(it->second.c_str(), nullptr, 10);
  }
  p->ceil_mode = kv["ceil"] == "1" || kv["ceil"] == "True";
  p->count_include_pad = kv["include_pad"] == "1" || kv["include_pad"] == "True";
  const std::string dtype = kv["dtype"], layout = kv["layout"];
  if (dtype == "f32") p->dtype = AVGPOOL_DTYPE_F32;
  else if (dtype == "f64") p->dtype = AVGPOOL_DTYPE_F64;
  else if (dtype == "f16") p->dtype = AVGPOOL_DTYPE_F16;
  else if (dtype == "bf16") p->dtype = AVGPOOL_DTYPE_BF16;
  else {
    *error = "unknown dtype '" + dtype + "'";
    return false;
  }
  if (layout == "nchw") p->layout = AVGPOOL_LAYOUT_NCHW;
  else if (layout == "nhwc") p->layout = AVGPOOL_LAYOUT_NHWC;
  else {
    *error = "unknown layout '" + layout + "'";
    return false;
  }
  return true;
}

// One ulp at 1.0 of the dtype, plus the float32 summation error of a
// window, scaled by the largest output inputs in [-1, 1) can give.
double fast_tolerance(const avgpool_params& p) {
  const double ulp = p.dtype == AVGPOOL_DTYPE_F16    ? 0x1p-10
                     : p.dtype == AVGPOOL_DTYPE_BF16 ? 0x1p-7
                     : p.dtype == AVGPOOL_DTYPE_F64  ? 0x1p-52
                                                     : 0x1p-23;
  const double k = (double)(p.kernel_h * p.kernel_w);
  const double scale = p.divisor_override ? k / (double)p.divisor_override : 1.0;
  return (ulp + k * 0x1p-24) * scale;
}

double max_sampled_diff(avgpool_dtype dtype, const void* a, const void* ref, int64_t count) {
  const int64_t step = std::max<int64_t>(1, count >> 18);
  double worst = 0;
  for (int64_t i = 0; i < count; i += step) {
    const double d = fabs(avgpool_support::load_double(dtype, a, i) - avgpool_support::load_double(dtype, ref, i));
    worst = std::max(worst, d != d ? INFINITY : d);
  }
  return worst;
}

struct Contender {
  const char* name;
  std::function<void()> run;
  std::vector<double> times;  // per call, one a round
  int rounds = 0;
  int calls = 1;  // back to back in a round
};

// Calls in a round: about kRoundMs of work, at most kMaxCalls.
constexpr double kRoundMs = 1.0;
constexpr int kMaxCalls = 64;

void measure(const avgpool_params& fast, const Options& opt, std::ostringstream& json) {
  avgpool_params exact = fast;
  exact.numerics = AVGPOOL_NUMERICS_PYTORCH;
  avgpool_plan *plan = nullptr, *plan_exact = nullptr;
  if (avgpool_plan_create(&fast, &plan) != AVGPOOL_SUCCESS ||
      avgpool_plan_create(&exact, &plan_exact) != AVGPOOL_SUCCESS) {
    json << "\"error\": " << json_string(avgpool_last_error_message());
    avgpool_plan_destroy(plan);
    return;
  }
  std::unique_ptr<avgpool_plan, avgpool_status (*)(avgpool_plan*)> own(plan, avgpool_plan_destroy),
      own_exact(plan_exact, avgpool_plan_destroy);
  int64_t ns = 0, nd = 0, dims[4];
  avgpool_plan_sizes(plan, &ns, &nd);
  avgpool_plan_output_dims(plan, dims);
  const char *impl = nullptr, *impl_exact = nullptr;
  avgpool_plan_impl_name(plan, &impl);
  avgpool_plan_impl_name(plan_exact, &impl_exact);
  const int64_t es = avgpool_support::element_size(fast.dtype);
  Buffer x(ns * es), copy(ns * es), y_fast(nd * es), y_exact(nd * es), y_loop(nd * es), y_dnnl(nd * es);
  avgpool_support::fill_random(fast.dtype, x.data(), ns, 1, -1.0, 1.0);

  std::vector<Contender> cs;
  float sink = 0;
  cs.push_back({"read", [&] { sink += avgpool_bench::read_pass(x.data(), ns * es); }, {}});
  cs.push_back({"copy", [&] { avgpool_bench::copy_pass(x.data(), copy.data(), ns * es); }, {}});
  cs.push_back({"fast", [&] { avgpool_plan_execute(plan, x.data(), y_fast.data(), nullptr); }, {}});
  cs.push_back({"pytorch", [&] { avgpool_plan_execute(plan_exact, x.data(), y_exact.data(), nullptr); }, {}});
  std::string refusal = avgpool_bench::dnnl_refusal(fast), dnnl_impl;
#if defined(AVGPOOL_BENCH_WITH_DNNL)
  std::unique_ptr<avgpool_bench::DnnlForward> dnnl;
  if (refusal.empty()) {
    try {
      dnnl.reset(new avgpool_bench::DnnlForward(fast, dims[2], dims[3], x.data(), y_dnnl.data()));
      dnnl_impl = dnnl->impl();
      cs.push_back({"dnnl", [&] { dnnl->run(); }, {}});
    } catch (const dnnl::error& e) {
      refusal = std::string("oneDNN: ") + e.what();
    }
  }
#endif
  cs.push_back({"loop", [&] { avgpool_bench::plain_loop(fast, dims[2], dims[3], x.data(), y_loop.data()); }, {}});

  // Warm-up (oneDNN's JIT, first touch of the outputs), which sizes the rounds.
  int rounds = 0;
  for (Contender& c : cs) {
    const double t0 = now_ms();
    c.run();
    const double t = std::max(now_ms() - t0, 1e-3);
    c.calls = std::max(1, std::min(kMaxCalls, (int)(kRoundMs / t)));
    c.rounds = std::max(1, std::min(opt.max_rounds, (int)(opt.budget_ms / (t * c.calls))));
    rounds = std::max(rounds, c.rounds);
  }
  for (int r = 0; r < rounds; ++r)
    for (size_t k = 0; k < cs.size(); ++k) {
      Contender& c = cs[(r + k) % cs.size()];
      if ((int)c.times.size() >= c.rounds) continue;
      const double t0 = now_ms();
      for (int i = 0; i < c.calls; ++i) c.run();
      c.times.push_back((now_ms() - t0) / c.calls);
    }

  const double err = std::max(max_sampled_diff(fast.dtype, y_fast.data(), y_exact.data(), nd),
                              max_sampled_diff(fast.dtype, y_loop.data(), y_exact.data(), nd));
  char buf[128];
  json << "\"fast_impl\": " << json_string(impl) << ", \"pytorch_impl\": " << json_string(impl_exact);
  for (const Contender& c : cs) {
    snprintf(buf, sizeof buf, ", \"%s_ms\": %.6g, \"%s_median_ms\": %.6g, \"%s_rounds\": %d", c.name,
             *std::min_element(c.times.begin(), c.times.end()), c.name, median(c.times), c.name,
             (int)c.times.size());
    json << buf;
  }
  if (refusal.empty()) json << ", \"dnnl_impl\": " << json_string(dnnl_impl);
  else json << ", \"dnnl_refusal\": " << json_string(refusal);
  snprintf(buf, sizeof buf, ", \"check_err\": %.6g, \"check_tol\": %.6g", err, fast_tolerance(fast));
  json << buf;
  g_sink = sink;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--budget-ms") && i + 1 < argc) opt.budget_ms = atof(argv[++i]);
    else if (!strcmp(argv[i], "--max-rounds") && i + 1 < argc) opt.max_rounds = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--budget-ms MS] [--max-rounds R] < configs\n", argv[0]);
      return 2;
    }
  }
  std::string line;
  char chunk[4096];
  int index = 0;
  while (fgets(chunk, sizeof chunk, stdin)) {
    line = chunk;
    if (line.find_first_not_of(" \t\r\n") == std::string::npos) continue;
    std::ostringstream json;
    json << "{\"index\": " << index++ << ", ";
    avgpool_params p;
    std::string error;
    if (parse_config(line, &p, &error)) measure(p, opt, json);
    else json << "\"error\": " << json_string(error);
    json << "}\n";
    fputs(json.str().c_str(), stdout);
    fflush(stdout);
  }
  return 0;
}
