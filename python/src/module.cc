// baton._baton: the nanobind extension behind `import baton`.
#include "module.h"

#include "conversions.h"

NB_MODULE(_baton, m) {
  m.doc() = "baton's C++ runtime (use the `baton` package, not this module)";
  baton::python::InitDTypes(m);
  init_errors(m);
  init_devices(m);
  init_memory(m);
  init_array(m);
  init_host_views(m);
  init_gc_guard(m);
  init_dlpack(m);
  init_transfers(m);
  init_donation(m);
  init_config(m);
  init_tracer(m);
  init_lax(m);
  init_lax_linalg(m);
  init_compiled(m);
  init_jit(m);
  init_transforms(m);
  init_sharded_array(m);
  init_sharded_jit(m);
  init_host_callbacks(m);
  init_profiler(m);
  init_distributed(m);
  init_environment(m);
}
