// Python <-> baton::Array.
//
// The Python class `baton.Array` wraps the shared ArrayImpl (held through
// std::shared_ptr; ArrayImpl derives from enable_shared_from_this), so every
// baton::Array handle of one array maps to the SAME Python object while that
// object lives: `bt.live_arrays()` returns the user's own objects, and a C++
// function returning an input array returns the caller's object.
// This caster lets bindings take and return baton::Array by value; a null
// Array converts to None.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/shared_ptr.h>

#include "baton/runtime/array.h"

namespace nanobind::detail {

template <>
struct type_caster<baton::Array> {
  using ImplCaster = make_caster<std::shared_ptr<baton::ArrayImpl>>;
  NB_TYPE_CASTER(baton::Array, ImplCaster::Name)

  bool from_python(handle src, uint8_t flags, cleanup_list* cleanup) noexcept {
    ImplCaster c;
    if (!c.from_python(src, flags, cleanup)) return false;
    value = baton::Array(c.value);
    return true;
  }

  static handle from_cpp(const baton::Array& a, rv_policy policy,
                         cleanup_list* cleanup) noexcept {
    if (!a.valid()) return none().release();
    return ImplCaster::from_cpp(a.shared_impl(), policy, cleanup);
  }
};

}  // namespace nanobind::detail
