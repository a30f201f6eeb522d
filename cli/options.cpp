#include "options.h"

#include <stdlib.h>
#include <string.h>

namespace avgpool_cli {

const char* const kUsage =
    "usage:\n"
    "  avgpool run [options]       time one pooling and check it against the reference\n"
    "  avgpool run --backward [options]\n"
    "                              the same for the backward (grad_input from grad_output)\n"
    "  avgpool golden FILE [--backend B] [--numerics fast|pytorch] [--emit OUT]\n"
    "                              run every case of a golden-format file (forward or\n"
    "                              backward, recognised by its content)\n"
    "  avgpool --help | --version\n"
    "\n"
    "run options (default: the seed case 16x64x2048x2048 f32, kernel 11, stride = kernel,\n"
    "padding 0, on the best backend; without a GPU the batch is scaled down to 2):\n"
    "  --shape N,C,H,W        input dims (always N,C,H,W, whatever the layout)\n"
    "  --kernel KH[,KW]       kernel size (KW = KH when omitted)\n"
    "  --stride SH[,SW]       stride (default: the kernel)\n"
    "  --padding PH[,PW]      zero padding, at most kernel / 2\n"
    "  --ceil-mode            PyTorch's ceil_mode=True\n"
    "  --exclude-pad          count_include_pad=False\n"
    "  --divisor D            divisor_override\n"
    "  --dtype f32|f16|bf16|f64\n"
    "  --layout nchw|nhwc\n"
    "  --backend auto|reference|cpu|cuda\n"
    "  --numerics fast|pytorch\n"
    "  --repeat R             timed runs after one warm-up (default 20); the median is printed\n"
    "  --seed S               input seed (default 20261129)\n"
    "  --samples K            random outputs checked against the reference (default 4096),\n"
    "                         besides every edge row and column of the first, middle and last plane\n"
    "  --verbose              when no GPU is usable, also print the CUDA runtime's report\n"
    "                         (error name and text, device count, driver and runtime versions)\n"
    "  --backward             time the backward instead: grad_output in, grad_input out (checked\n"
    "                         the same way, on grad_input)\n"
    "\n"
    "Without a usable GPU, `run` says why in one line (e.g. \"no CUDA driver or device found\")\n"
    "and runs on the CPU.\n"
    "golden: --emit OUT writes the file back in its own format with our float32 results in\n"
    "place of out/out32 (forward) or gin32 (backward)\n";

namespace {

bool parse_int(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  const long long v = strtoll(s.c_str(), &end, 10);
  if (*end != '\0') return false;
  *out = v;
  return true;
}

// "a" or "a,b" into one or two integers (b = a when absent).
bool parse_pair(const std::string& s, int64_t* a, int64_t* b) {
  const size_t comma = s.find(',');
  if (comma == std::string::npos) return parse_int(s, a) && (*b = *a, true);
  return parse_int(s.substr(0, comma), a) && parse_int(s.substr(comma + 1), b);
}

bool parse_shape(const std::string& s, avgpool_params* p) {
  int64_t v[4];
  size_t start = 0;
  for (int i = 0; i < 4; ++i) {
    const size_t comma = s.find(',', start);
    if ((i < 3) != (comma != std::string::npos)) return false;
    if (!parse_int(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start), &v[i]))
      return false;
    start = comma + 1;
  }
  p->n = v[0]; p->c = v[1]; p->h = v[2]; p->w = v[3];
  return true;
}

// *out = the value (0, 1, ...) that the library's name function spells s;
// the names end where it answers "?".
template <typename Enum> bool parse_enum(const std::string& s, const char* (*name)(Enum), Enum* out) {
  for (int i = 0; strcmp(name(static_cast<Enum>(i)), "?") != 0; ++i)
    if (s == name(static_cast<Enum>(i))) {
      *out = static_cast<Enum>(i);
      return true;
    }
  return false;
}

bool parse_dtype(const std::string& s, avgpool_dtype* out) { return parse_enum(s, avgpool_dtype_name, out); }
bool parse_layout(const std::string& s, avgpool_layout* out) { return parse_enum(s, avgpool_layout_name, out); }

}  // namespace

bool parse_backend(const std::string& s, avgpool_backend* out) { return parse_enum(s, avgpool_backend_name, out); }
bool parse_numerics(const std::string& s, avgpool_numerics* out) {
  return parse_enum(s, avgpool_numerics_name, out);
}

std::string parse_run(const std::vector<std::string>& args, RunOptions* o) {
  avgpool_params& p = o->params;
  avgpool_params_init(&p);
  p.n = 16; p.c = 64; p.h = 2048; p.w = 2048;
  p.kernel_h = p.kernel_w = 11;
  bool stride_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string* v) {
      if (i + 1 >= args.size()) return false;
      *v = args[++i];
      return true;
    };
    std::string v;
    int64_t x = 0;
    if (a == "--ceil-mode") p.ceil_mode = 1;
    else if (a == "--backward") o->backward = true;
    else if (a == "--exclude-pad") p.count_include_pad = 0;
    else if (a == "--verbose") o->verbose = true;
    else if (a == "--shape") {
      if (!value(&v) || !parse_shape(v, &p)) return "--shape needs N,C,H,W (four integers)";
      o->shape_given = true;
    } else if (a == "--kernel") {
      if (!value(&v) || !parse_pair(v, &p.kernel_h, &p.kernel_w)) return "--kernel needs KH[,KW]";
    } else if (a == "--stride") {
      if (!value(&v) || !parse_pair(v, &p.stride_h, &p.stride_w)) return "--stride needs SH[,SW]";
      stride_given = true;
    } else if (a == "--padding") {
      if (!value(&v) || !parse_pair(v, &p.padding_h, &p.padding_w)) return "--padding needs PH[,PW]";
    } else if (a == "--divisor") {
      if (!value(&v) || !parse_int(v, &p.divisor_override)) return "--divisor needs an integer";
    } else if (a == "--dtype") {
      if (!value(&v) || !parse_dtype(v, &p.dtype)) return "--dtype needs f32, f16, bf16 or f64";
    } else if (a == "--layout") {
      if (!value(&v) || !parse_layout(v, &p.layout)) return "--layout needs nchw or nhwc";
    } else if (a == "--backend") {
      if (!value(&v) || !parse_backend(v, &p.backend)) return "--backend needs auto, reference, cpu or cuda";
    } else if (a == "--numerics") {
      if (!value(&v) || !parse_numerics(v, &p.numerics)) return "--numerics needs fast or pytorch";
    } else if (a == "--repeat") {
      if (!value(&v) || !parse_int(v, &x) || x < 1 || x > 100000) return "--repeat needs an integer in [1, 100000]";
      o->repeat = (int)x;
    } else if (a == "--seed") {
      if (!value(&v) || !parse_int(v, &x)) return "--seed needs an integer";
      o->seed = (uint64_t)x;
    } else if (a == "--samples") {
      if (!value(&v) || !parse_int(v, &x) || x < 0 || x > 100000000) return "--samples needs an integer >= 0";
      o->samples = (int)x;
    } else {
      return "unknown run option '" + a + "'";
    }
  }
  if (!stride_given) p.stride_h = p.stride_w = 0;  // = the kernel
  return "";
}

std::string parse_golden(const std::vector<std::string>& args, GoldenOptions* o) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "--backend") {
      if (!has_value || !parse_backend(args[++i], &o->backend)) return "--backend needs auto, reference, cpu or cuda";
    } else if (a == "--numerics") {
      if (!has_value || !parse_numerics(args[++i], &o->numerics)) return "--numerics needs fast or pytorch";
    } else if (a == "--emit") {
      if (!has_value) return "--emit needs a file name";
      o->emit = args[++i];
    } else if (!a.empty() && a[0] == '-') {
      return "unknown golden option '" + a + "'";
    } else if (o->file.empty()) {
      o->file = a;
    } else {
      return "golden takes one FILE";
    }
  }
  if (o->file.empty()) return "golden needs a FILE";
  return "";
}

}  // namespace avgpool_cli
