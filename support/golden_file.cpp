#include "golden_file.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>

namespace avgpool_support {

namespace {

bool read_values(std::istream& in, int64_t count, std::vector<double>* out) {
  if (count < 0) return false;
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

// Reads "key" followed by count values into a float vector.
bool read_float_block(std::istream& in, const char* key, int64_t count, std::vector<float>* out) {
  std::string word;
  std::vector<double> values;
  if (!(in >> word) || word != key || !read_values(in, count, &values)) return false;
  out->assign(values.begin(), values.end());
  return true;
}

// Reads "key count" and count values into a float vector; want >= 0: count
// must equal it.
bool read_counted_floats(std::istream& in, const char* key, int64_t want, std::vector<float>* out) {
  std::string word;
  int64_t count = 0;
  std::vector<double> values;
  if (!(in >> word >> count) || word != key || (want >= 0 && count != want) || !read_values(in, count, &values))
    return false;
  out->assign(values.begin(), values.end());
  return true;
}

// The case's name and the "shape" and "params" lines every case starts with.
bool read_config(std::istream& in, const std::string& name, GoldenConfig* gc) {
  gc->name = name;
  std::string key;
  if (!(in >> key >> gc->n >> gc->c >> gc->h >> gc->w) || key != "shape") return false;
  return static_cast<bool>(in >> key >> gc->kh >> gc->kw >> gc->sh >> gc->sw >> gc->ph >> gc->pw >> gc->ceil_mode >>
                           gc->count_include_pad >> gc->divisor_override) &&
         key == "params";
}

// Walks a golden file: blank and '#' lines are skipped; a "case NAME" line
// starts a case (a body spans many lines and is read token by token): its
// config, then read_body, which returns "" or what is wrong; complete cases
// go to *cases. Any other first word goes to other_line, which returns false
// when it does not know the line.
template <typename Case, typename ReadBody, typename OtherLine>
bool parse_cases(const std::string& path, std::string* error, std::vector<Case>* cases, ReadBody read_body,
                 OtherLine other_line) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot open " + path;
    return false;
  }
  std::string line, word, name;
  int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    std::istringstream ls(line);
    if (!(ls >> word) || word[0] == '#') continue;
    std::string why;
    if (word == "case") {
      ls >> name;
      Case gc;
      why = read_config(in, name, &gc) ? read_body(in, name, &gc) : "bad shape or params in " + name;
      if (why.empty()) {
        std::string end;
        if (!(in >> end) || end != "end") why = "missing end of " + name;
        std::getline(in, line);  // rest of the 'end' line
      }
      if (why.empty()) cases->push_back(std::move(gc));
    } else if (!other_line(word, ls)) {
      why = "expected 'case', got '" + word + "'";
    }
    if (!why.empty()) {
      *error = path + ":" + std::to_string(line_no) + ": " + why;
      return false;
    }
  }
  return true;
}

std::string read_forward_body(std::istream& in, const std::string& name, GoldenCase* gc) {
  if (!read_counted_floats(in, "in", gc->n * gc->c * gc->h * gc->w, &gc->in)) return "bad in values in " + name;
  std::string key;
  int64_t* od = gc->out_dims;
  if (!(in >> key >> od[0] >> od[1] >> od[2] >> od[3]) || key != "out") return "bad out line in " + name;
  const int64_t count = od[0] * od[1] * od[2] * od[3];
  if (!read_values(in, count, &gc->out)) return "bad out values in " + name;
  if (!read_float_block(in, "out32", count, &gc->out32)) return "bad out32 values in " + name;
  return "";
}

std::string read_backward_body(std::istream& in, const std::string& name, GoldenBackwardCase* gc) {
  // float32 grad_output values are printed with 9 digits: exact.
  if (!read_counted_floats(in, "gout", -1, &gc->gout)) return "bad gout values in " + name;
  std::string key;
  int64_t dims[4] = {0, 0, 0, 0};
  if (!(in >> key >> dims[0] >> dims[1] >> dims[2] >> dims[3]) || key != "gin" || dims[0] != gc->n ||
      dims[1] != gc->c || dims[2] != gc->h || dims[3] != gc->w)
    return "bad gin line in " + name;
  const int64_t elements = gc->n * gc->c * gc->h * gc->w;
  if (!read_values(in, elements, &gc->gin)) return "bad gin values in " + name;
  for (auto [label, target] : {std::pair<const char*, std::vector<float>*>{"gin32", &gc->gin32},
                               {"gin16", &gc->gin16}, {"ginbf16", &gc->ginbf16}}) {
    if (!read_float_block(in, label, elements, target)) return std::string("bad ") + label + " values in " + name;
  }
  return "";
}

void write_config(std::ostream& os, const GoldenConfig& gc) {
  os << "case " << gc.name << "\nshape " << gc.n << ' ' << gc.c << ' ' << gc.h << ' ' << gc.w << "\nparams " << gc.kh
     << ' ' << gc.kw << ' ' << gc.sh << ' ' << gc.sw << ' ' << gc.ph << ' ' << gc.pw << ' ' << gc.ceil_mode << ' '
     << gc.count_include_pad << ' ' << gc.divisor_override << '\n';
}

// One line of values; NaN as PyTorch prints it (printf would show the sign
// bit: "-nan").
template <typename T>
void write_values(std::ostream& os, const char* format, const std::vector<T>& values) {
  char buf[64];
  for (size_t i = 0; i < values.size(); ++i) {
    snprintf(buf, sizeof buf, format, isnan((double)values[i]) ? NAN : (double)values[i]);
    os << (i ? " " : "") << buf;
  }
  os << '\n';
}

template <typename File>
const File* read_once(bool (*read)(const std::string&, File*, std::string*), const std::string& path,
                      std::string* error) {
  static std::string load_error;
  static const File* const file = [&] {
    static File f;
    return read(path, &f, &load_error) ? &f : nullptr;
  }();
  if (file == nullptr && error != nullptr) *error = load_error;
  return file;
}

std::string path_from(const char* env_name, const char* configured, const char* relative) {
  if (const char* env = getenv(env_name)) return env;
  return configured != nullptr ? configured : relative;
}

}  // namespace

bool read_golden(const std::string& path, GoldenFile* file, std::string* error) {
  GoldenFile result;
  auto rejected_line = [&](const std::string& word, std::istream& ls) {
    GoldenRejected r{};
    if (word != "rejected" ||
        !(ls >> r.n >> r.c >> r.h >> r.w >> r.kh >> r.kw >> r.sh >> r.sw >> r.ph >> r.pw >> r.ceil_mode))
      return false;
    result.rejected.push_back(r);
    return true;
  };
  if (!parse_cases(path, error, &result.cases, read_forward_body, rejected_line)) return false;
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
  GoldenBackwardFile result;
  auto no_other_lines = [](const std::string&, std::istream&) { return false; };
  if (!parse_cases(path, error, &result.cases, read_backward_body, no_other_lines)) return false;
  *file = std::move(result);
  return true;
}

avgpool_params golden_params(const GoldenConfig& gc, avgpool_backend backend, avgpool_numerics numerics) {
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
  avgpool_params defaults;
  avgpool_params_init(&defaults);
  return golden_params(r, defaults.backend, defaults.numerics);
}

std::string format_case(const GoldenBackwardCase& gc, const std::vector<float>& gin32) {
  std::ostringstream os;
  write_config(os, gc);
  os << "gout " << gc.gout.size() << '\n';
  write_values(os, "%.9g", gc.gout);
  os << "gin " << gc.n << ' ' << gc.c << ' ' << gc.h << ' ' << gc.w << '\n';
  write_values(os, "%.17g", gc.gin);
  os << "gin32 ";
  write_values(os, "%.9g", gin32);
  os << "gin16 ";
  write_values(os, "%.9g", gc.gin16);
  os << "ginbf16 ";
  write_values(os, "%.9g", gc.ginbf16);
  os << "end\n";
  return os.str();
}

std::string format_case(const GoldenCase& gc, const std::vector<float>& values) {
  std::ostringstream os;
  write_config(os, gc);
  os << "in " << gc.in.size() << '\n';
  write_values(os, "%.9g", gc.in);
  os << "out " << gc.out_dims[0] << ' ' << gc.out_dims[1] << ' ' << gc.out_dims[2] << ' ' << gc.out_dims[3] << '\n';
  write_values(os, "%.9g", values);
  os << "out32 ";
  write_values(os, "%.9g", values);
  os << "end\n";
  return os.str();
}

#ifndef AVGPOOL_GOLDEN_DEFAULT
#define AVGPOOL_GOLDEN_DEFAULT nullptr
#endif
#ifndef AVGPOOL_GOLDEN_BACKWARD_DEFAULT
#define AVGPOOL_GOLDEN_BACKWARD_DEFAULT nullptr
#endif

std::string default_golden_path() {
  return path_from("AVGPOOL_GOLDEN", AVGPOOL_GOLDEN_DEFAULT, "tests/data/pytorch_avgpool2d.golden");
}

std::string default_golden_backward_path() {
  return path_from("AVGPOOL_GOLDEN_BACKWARD", AVGPOOL_GOLDEN_BACKWARD_DEFAULT,
                   "tests/data/pytorch_avgpool2d_backward.golden");
}

const GoldenFile* default_golden(std::string* error) {
  return read_once<GoldenFile>(read_golden, default_golden_path(), error);
}

const GoldenBackwardFile* default_golden_backward(std::string* error) {
  return read_once<GoldenBackwardFile>(read_golden_backward, default_golden_backward_path(), error);
}

}  // namespace avgpool_support
