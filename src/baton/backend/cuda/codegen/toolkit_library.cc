#include "baton/backend/cuda/codegen/toolkit_library.h"

#include <dlfcn.h>

#include <vector>

namespace baton::cuda {

ToolkitLibrary OpenToolkitLibrary(const std::string& stem) {
  return OpenToolkitLibrary(stem, {"13", "12"});
}

ToolkitLibrary OpenToolkitLibrary(const std::string& stem,
                                  const std::vector<std::string>& versions) {
  const std::string file = "lib" + stem + ".so";
  std::vector<std::string> names;
#ifdef BATON_CUDA_LIB_DIR
  for (const std::string& v : versions) {
    names.push_back(std::string(BATON_CUDA_LIB_DIR) + "/" + file + "." + v);
  }
#endif
  for (const std::string& v : versions) names.push_back(file + "." + v);
  names.push_back(file);
  ToolkitLibrary lib;
  for (const std::string& name : names) {
    lib.handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib.handle != nullptr) {
      lib.loaded = name;
      return lib;
    }
    if (!lib.tried.empty()) lib.tried += ", ";
    lib.tried += name;
    const char* error = dlerror();
    lib.last_error = error != nullptr ? error : "unknown dlopen error";
  }
  return lib;
}

void* ResolveSymbol(void* library, const char* symbol, std::string* missing) {
  void* fn = dlsym(library, symbol);
  if (fn == nullptr) {
    if (!missing->empty()) *missing += ", ";
    *missing += symbol;
  }
  return fn;
}

}  // namespace baton::cuda
