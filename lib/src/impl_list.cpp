// The ordered list of implementations: CUDA, then CPU, then the reference.
#include "impl.h"

namespace avgpool {

#if !defined(AVGPOOL_WITH_CUDA)
ImplList cuda_impls() { return ImplList{nullptr, 0}; }  // CUDA not compiled in
#endif

const std::vector<const Impl*>& all_impls() {
  static const std::vector<const Impl*> list = [] {
    std::vector<const Impl*> v;
    for (ImplList l : {cuda_impls(), cpu_impls(), reference_impls()})
      for (size_t i = 0; i < l.count; ++i) v.push_back(l.items[i]);
    return v;
  }();
  return list;
}

}  // namespace avgpool
