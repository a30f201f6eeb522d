#include "golden_file.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>

namespace avgpool_support {

namespace {

bool read_values(std::istream& in, int64_t count, std::vector<double>* out) {
  out->resize(count);
  std::string token;
  for (int64_t i = 0; i < count; ++i) {
    if (!(in >> token)) return false;
    char* end = nullptr;
    (*out)[i] = strtod(token.c_str(), &end);  // handles nan, inf, -inf
    if (end == token.c_str() || *end != '\0') return false;
  }
  return true;
}

}  // namespace

bool read_golden(const std::string& path, GoldenFile* file, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot open " + path;
    return false;
  }
  GoldenFile result;
  std::string line, word;
  int64_t line_no = 0;
  auto fail = [&](const std::string& why) {
    *error = path + ":" + std::to_string(line_no) + ": " + why;
    return false;
  };
  while (std::getline(in, line)) {
    ++line_no;
    std::istringstream ls(line);
    if (!(ls >> word) || word[0] == '#') continue;
    if (word == "rejected") {
      GoldenRejected r{};
      if (!(ls >> r.n >> r.c >> r.h >> r.w >> r.kh >> r.kw >> r.sh >> r.sw >> r.ph >> r.pw >>
            r.ceil_mode))
        return fail("bad rejected line");
      result.rejected.push_back(r);
      continue;
    }
    if (word != "case") return fail("expected 'case', got '" + word + "'");
    GoldenCase gc;
    ls >> gc.name;
    // The body is read token by token: the value lists span many lines.
    std::string key;
    int64_t count = 0;
    std::vector<double> values;
    if (!(in >> key >> gc.n >> gc.c >> gc.h >> gc.w) || key != "shape") return fail("bad shape in " + gc.name);
    if (!(in >> key >> gc.kh >> gc.kw >> gc.sh >> gc.sw >> gc.ph >> gc.pw >> gc.ceil_mode >>
          gc.count_include_pad >> gc.divisor_override) || key != "params")
      return fail("bad params in " + gc.name);
    if (!(in >> key >> count) || key != "in" || count != gc.n * gc.c * gc.h * gc.w ||
        !read_values(in, count, &values))
      return fail("bad in values in " + gc.name);
    gc.in.assign(values.begin(), values.end());
    if (!(in >> key >> gc.out_dims[0] >> gc.out_dims[1] >> gc.out_dims[2] >> gc.out_dims[3]) || key != "out")
      return fail("bad out line in " + gc.name);
    count = gc.out_dims[0] * gc.out_dims[1] * gc.out_dims[2] * gc.out_dims[3];
    if (!read_values(in, count, &gc.out)) return fail("bad out values in " + gc.name);
    if (!(in >> key) || key != "out32" || !read_values(in, count, &values))
      return fail("bad out32 values in " + gc.name);
    gc.out32.assign(values.begin(), values.end());
    if (!(in >> key) || key != "end") return fail("missing end of " + gc.name);
    std::getline(in, line);  // rest of the 'end' line
    result.cases.push_back(std::move(gc));
  }
  *file = std::move(result);
  return true;
}

bool is_backward_golden(const std::string& path) {
  std::ifstream in(path);
  std::string line, word;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    if (!(ls >> word) || word[0] == '#' || word == "case" || word == "shape" || word == "params") continue;
    return word == "gout";
  }
  return false;
}

bool read_golden_backward(const std::string& path, GoldenBackwardFile* file, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot open " + path;
    return false;
  }
  GoldenBackwardFile result;
  std::string line, word;
  int64_t line_no = 0;
  auto fail = [&](const std::string& why) {
    *error = path + ":" + std::to_string(line_no) + ": " + why;
    return false;
  };
  while (std::getline(in, line)) {
    ++line_no;
    std::istringstream ls(line);
    if (!(ls >> word) || word[0] == '#') continue;
    if (word != "case") return fail("expected 'case', got '" + word + "'");
    GoldenBackwardCase gc;
    ls >> gc.name;
    std::string key;
    int64_t count = 0, dims[4] = {0, 0, 0, 0};
    std::vector<double> values;
    if (!(in >> key >> gc.n >> gc.c >> gc.h >> gc.w) || key != "shape") return fail("bad shape in " + gc.name);
    if (!(in >> key >> gc.kh >> gc.kw >> gc.sh >> gc.sw >> gc.ph >> gc.pw >> gc.ceil_mode >>
          gc.count_include_pad >> gc.divisor_override) || key != "params")
      return fail("bad params in " + gc.name);
    if (!(in >> key >> count) || key != "gout" || count < 0 || !read_values(in, count, &values))
      return fail("bad gout values in " + gc.name);
    gc.gout.assign(values.begin(), values.end());  // float32 values printed with 9 digits: exact
    if (!(in >> key >> dims[0] >> dims[1] >> dims[2] >> dims[3]) || key != "gin" || dims[0] != gc.n ||
        dims[1] != gc.c || dims[2] != gc.h || dims[3] != gc.w)
      return fail("bad gin line in " + gc.name);
    const int64_t elements = gc.n * gc.c * gc.h * gc.w;
    if (!read_values(in, elements, &gc.gin)) return fail("bad gin values in " + gc.name);
    for (auto [label, target] : {std::pair<const char*, std::vector<float>*>{"gin32", &gc.gin32},
                                 {"gin16", &gc.gin16}, {"ginbf16", &gc.ginbf16}}) {
      if (!(in >> key) || key != label || !read_values(in, elements, &values))
        return fail(std::string("bad ") + label + " values in " + gc.name);
      target->assign(values.begin(), values.end());
    }
    if (!(in >> key) || key != "end") return fail("missing end of " + gc.name);
    std::getline(in, line);
    result.cases.push_back(std::move(gc));
  }
  *file = std::move(result);
  return true;
}

avgpool_params golden_params(const GoldenBackwardCase& gc, avgpool_backend backend, avgpool_numerics numerics) {
  avgpool_params p;
  avgpool_params_init(&p);
  p.n = gc.n; p.c = gc.c; p.h = gc.h; p.w = gc.w;
  p.kernel_h = gc.kh; p.kernel_w = gc.kw;
  p.stride_h = gc.sh; p.stride_w = gc.sw;
  p.padding_h = gc.ph; p.padding_w = gc.pw;
  p.ceil_mode = gc.ceil_mode;
  p.count_include_pad = gc.count_include_pad;
  p.divisor_override = gc.divisor_override;
  p.backend = backend;
  p.numerics = numerics;
  return p;
}

std::string format_case(const GoldenBackwardCase& gc, const std::vector<float>& gin32) {
  std::ostringstream os;
  os << "case " << gc.name << "\nshape " << gc.n << ' ' << gc.c << ' ' << gc.h << ' ' << gc.w << "\nparams "
     << gc.kh << ' ' << gc.kw << ' ' << gc.sh << ' ' << gc.sw << ' ' << gc.ph << ' ' << gc.pw << ' '
     << gc.ceil_mode << ' ' << gc.count_include_pad << ' ' << gc.divisor_override << "\ngout " << gc.gout.size()
     << '\n';
  char buf[64];
  auto list = [&](const char* format, auto values) {
    for (size_t i = 0; i < values.size(); ++i) {
      // NaN as PyTorch prints it (printf would show the sign bit: "-nan").
      snprintf(buf, sizeof buf, format, isnan((double)values[i]) ? NAN : (double)values[i]);
      os << (i ? " " : "") << buf;
    }
    os << '\n';
  };
  list("%.9g", gc.gout);
  os << "gin " << gc.n << ' ' << gc.c << ' ' << gc.h << ' ' << gc.w << '\n';
  list("%.17g", gc.gin);
  os << "gin32 ";
  list("%.9g", gin32);
  os << "gin16 ";
  list("%.9g", gc.gin16);
  os << "ginbf16 ";
  list("%.9g", gc.ginbf16);
  os << "end\n";
  return os.str();
}

avgpool_params golden_params(const GoldenCase& gc, avgpool_backend backend,
                             avgpool_numerics numerics) {
  avgpool_params p;
  avgpool_params_init(&p);
  p.n = gc.n; p.c = gc.c; p.h = gc.h; p.w = gc.w;
  p.kernel_h = gc.kh; p.kernel_w = gc.kw;
  p.stride_h = gc.sh; p.stride_w = gc.sw;
  p.padding_h = gc.ph; p.padding_w = gc.pw;
  p.ceil_mode = gc.ceil_mode;
  p.count_include_pad = gc.count_include_pad;
  p.divisor_override = gc.divisor_override;
  p.backend = backend;
  p.numerics = numerics;
  return p;
}

avgpool_params rejected_params(const GoldenRejected& r) {
  avgpool_params p;
  avgpool_params_init(&p);
  p.n = r.n; p.c = r.c; p.h = r.h; p.w = r.w;
  p.kernel_h = r.kh; p.kernel_w = r.kw;
  p.stride_h = r.sh; p.stride_w = r.sw;
  p.padding_h = r.ph; p.padding_w = r.pw;
  p.ceil_mode = r.ceil_mode;
  return p;
}

std::string format_case(const GoldenCase& gc, const std::vector<float>& values) {
  std::ostringstream os;
  char buf[64];
  os << "case " << gc.name << "\nshape " << gc.n << ' ' << gc.c << ' ' << gc.h << ' ' << gc.w
     << "\nparams " << gc.kh << ' ' << gc.kw << ' ' << gc.sh << ' ' << gc.sw << ' ' << gc.ph << ' '
     << gc.pw << ' ' << gc.ceil_mode << ' ' << gc.count_include_pad << ' ' << gc.divisor_override
     << "\nin " << gc.in.size() << '\n';
  auto list = [&](const std::vector<float>& v) {
    for (size_t i = 0; i < v.size(); ++i) {
      snprintf(buf, sizeof buf, "%.9g", (double)v[i]);
      os << (i ? " " : "") << buf;
    }
    os << '\n';
  };
  list(gc.in);
  os << "out " << gc.out_dims[0] << ' ' << gc.out_dims[1] << ' ' << gc.out_dims[2] << ' '
     << gc.out_dims[3] << '\n';
  list(values);
  os << "out32 ";
  list(values);
  os << "end\n";
  return os.str();
}

std::string default_golden_path() {
  if (const char* env = getenv("AVGPOOL_GOLDEN")) return env;
#ifdef AVGPOOL_GOLDEN_DEFAULT
  return AVGPOOL_GOLDEN_DEFAULT;
#else
  return "tests/data/pytorch_avgpool2d.golden";
#endif
}

const GoldenFile* default_golden(std::string* error) {
  static std::string load_error;
  static const GoldenFile* const file = [] {
    static GoldenFile f;
    return read_golden(default_golden_path(), &f, &load_error) ? &f : nullptr;
  }();
  if (file == nullptr && error != nullptr) *error = load_error;
  return file;
}

std::string default_golden_backward_path() {
  if (const char* env = getenv("AVGPOOL_GOLDEN_BACKWARD")) return env;
#ifdef AVGPOOL_GOLDEN_BACKWARD_DEFAULT
  return AVGPOOL_GOLDEN_BACKWARD_DEFAULT;
#else
  return "tests/data/pytorch_avgpool2d_backward.golden";
#endif
}

const GoldenBackwardFile* default_golden_backward(std::string* error) {
  static std::string load_error;
  static const GoldenBackwardFile* const file = [] {
    static GoldenBackwardFile f;
    return read_golden_backward(default_golden_backward_path(), &f, &load_error) ? &f : nullptr;
  }();
  if (file == nullptr && error != nullptr) *error = load_error;
  return file;
}

}  // namespace avgpool_support
