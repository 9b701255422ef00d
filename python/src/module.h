// The baton._baton extension: one init_<area> per file, called from
// module.cc's NB_MODULE in dependency order (errors and types first).
#pragma once

#include <nanobind/nanobind.h>

namespace nb = nanobind;

void init_errors(nb::module_& m);      // errors.cc
void init_devices(nb::module_& m);     // devices.cc
void init_memory(nb::module_& m);      // memory.cc
void init_array(nb::module_& m);       // array.cc
void init_host_views(nb::module_& m);  // host_views.cc (after array)
void init_gc_guard(nb::module_& m);    // gc_guard.cc
void init_dlpack(nb::module_& m);      // dlpack.cc (after array)
void init_transfers(nb::module_& m);   // transfers.cc
void init_donation(nb::module_& m);    // donation.cc
void init_config(nb::module_& m);      // config.cc (after errors)
void init_tracer(nb::module_& m);      // tracer_class.cc: `lax` and its Tracer
void init_lax(nb::module_& m);         // lax.cc (after tracer)
void init_lax_linalg(nb::module_& m);  // lax_linalg.cc (after tracer)
void init_compiled(nb::module_& m);    // compiled.cc: Lowered, Compiled
void init_jit(nb::module_& m);         // jit.cc (after tracer, donation)
void init_transforms(nb::module_& m);  // transforms.cc (after tracer)
void init_sharded_array(nb::module_& m);  // sharded_array.cc (after array)
void init_sharded_jit(nb::module_& m);  // sharded_jit.cc (after transforms,
                                        // sharded_array)
void init_host_callbacks(nb::module_& m);  // host_callbacks.cc (after tracer)
void init_profiler(nb::module_& m);      // profiler.cc
void init_distributed(nb::module_& m);   // distributed.cc
void init_environment(nb::module_& m);   // environment.cc
