// Cache keys and output building for bt.jit (declared in jit_cache.h).
#include "jit_cache.h"

#include <nanobind/stl/string.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "array_caster.h"
#include "trace_frames.h"

namespace baton::python {

uint64_t Mix(uint64_t h, uint64_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 12) + (h >> 4));
}

std::string SpecText(const ArgSpec& s) {
  return std::string(dtype_name(s.dtype)) + s.shape.to_string() +
         (s.memory_kind == MemoryKind::kDevice
              ? ""
              : ", " + std::string(memory_kind_name(s.memory_kind)));
}

bool FastFlatten(nb::handle h, std::string& code,
                 std::vector<nb::handle>& leaves, int depth) {
  if (depth > 16) return false;
  PyObject* o = h.ptr();
  if (nb::isinstance<ArrayImpl>(h) || nb::isinstance<Donated>(h) ||
      IsPythonScalar(h) || IsNumpyData(h)) {
    code += '*';
    leaves.push_back(h);
    return true;
  }
  if (o == Py_None) {
    code += 'n';
    return true;
  }
  if (PyTuple_CheckExact(o) || PyList_CheckExact(o)) {
    const bool tuple = PyTuple_CheckExact(o);
    const Py_ssize_t n = tuple ? PyTuple_GET_SIZE(o) : PyList_GET_SIZE(o);
    code += tuple ? 't' : 'l';
    code += std::to_string(n);
    code += '(';
    for (Py_ssize_t i = 0; i < n; ++i) {
      nb::handle c = tuple ? PyTuple_GET_ITEM(o, i) : PyList_GET_ITEM(o, i);
      if (!FastFlatten(c, code, leaves, depth + 1)) return false;
    }
    code += ')';
    return true;
  }
  if (PyDict_CheckExact(o)) {
    std::vector<std::pair<std::string_view, PyObject*>> items;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(o, &pos, &key, &value)) {
      if (!PyUnicode_CheckExact(key)) return false;
      Py_ssize_t len = 0;
      const char* k = PyUnicode_AsUTF8AndSize(key, &len);
      if (k == nullptr) {
        PyErr_Clear();
        return false;
      }
      items.emplace_back(std::string_view(k, len), value);
    }
    std::sort(items.begin(), items.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    code += 'd';
    code += std::to_string(items.size());
    code += '(';
    for (auto& [k, v] : items) {
      code += std::to_string(k.size());
      code += ':';
      code += k;
      if (!FastFlatten(v, code, leaves, depth + 1)) return false;
    }
    code += ')';
    return true;
  }
  return false;
}

void ParseOutNodes(nb::handle spec, std::vector<OutNode>& nodes) {
  const std::string kind =
      nb::cast<std::string>(nb::handle(PyTuple_GET_ITEM(spec.ptr(), 0)));
  OutNode node{kind[0], -1, 0, nb::object()};
  if (node.kind == '*') {
    node.leaf = nb::cast<int>(nb::handle(PyTuple_GET_ITEM(spec.ptr(), 1)));
    nodes.push_back(std::move(node));
    return;
  }
  if (node.kind == 'n') {
    nodes.push_back(std::move(node));
    return;
  }
  nb::handle children = PyTuple_GET_ITEM(spec.ptr(), node.kind == 'd' ? 2 : 1);
  if (node.kind == 'd') node.keys = nb::borrow(PyTuple_GET_ITEM(spec.ptr(), 1));
  node.size = static_cast<int>(nb::len(children));
  nodes.push_back(std::move(node));
  for (nb::handle c : nb::iter(children)) ParseOutNodes(c, nodes);
}

nb::object BuildOutput(const std::vector<OutNode>& nodes, size_t* at,
                       std::vector<Array>& outs) {
  const OutNode& node = nodes[(*at)++];
  switch (node.kind) {
    case '*':
      return nb::cast(outs[node.leaf]);
    case 'n':
      return nb::none();
    case 'l': {
      nb::list l;
      for (int i = 0; i < node.size; ++i)
        l.append(BuildOutput(nodes, at, outs));
      return l;
    }
    case 't': {
      PyObject* t = PyTuple_New(node.size);
      if (t == nullptr) throw nb::python_error();
      nb::object tuple = nb::steal(t);
      for (int i = 0; i < node.size; ++i) {
        PyTuple_SET_ITEM(t, i, BuildOutput(nodes, at, outs).release().ptr());
      }
      return tuple;
    }
    default: {  // 'd'
      nb::dict d;
      for (int i = 0; i < node.size; ++i) {
        d[PyTuple_GET_ITEM(node.keys.ptr(), i)] = BuildOutput(nodes, at, outs);
      }
      return d;
    }
  }
}

}  // namespace baton::python
