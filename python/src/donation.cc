// bt.donate(x) (DESIGN R4, call site): the Python `Donated` marker.
//
// It binds baton::Donated (baton/jit/donation.h): the consumed array plus
// its taken storage. x is consumed the moment donate() returns. The marker
// is spent by the first call that receives it -- device_put here (storage
// reused when the device and memory kind match, freed once copied
// otherwise), jit (which moves the baton::Donated into its call) later. A
// marker dropped unspent frees the storage once the work enqueued on it is
// done. The jit bindings get the C++ object with nb::cast<baton::Donated&>.
#include "allocation_stacks.h"
#include "donation.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "array_caster.h"
#include "baton/core/error.h"
#include "baton/runtime/copy_into.h"
#include "baton/runtime/device.h"
#include "baton/runtime/transfer.h"
#include "conversions.h"
#include "errors.h"
#include "module.h"
#include "not_constructible.h"

namespace baton::python {

std::string UnusableMarkerMessage(const Donated& d) {
  if (!d.array.IsDeleted()) {
    return "this bt.donate() marker was given back: the call it was passed "
           "to failed before running (or the donation was undone), and its "
           "array " + d.array.impl()->Describe() +
           " is live again with its values. Donate that array again: "
           "bt.donate(x)";
  }
  return "this bt.donate() marker was already used by a call (a donated "
         "array can be passed to one call only, also when several threads "
         "call at once); donate the array that call returned";
}

namespace {

Donated& Unspent(Donated& d) {
  if (!Holds(d)) ThrowIfError(InvalidArgument(UnusableMarkerMessage(d)));
  return d;
}

Donated DonateOne(const Array& array) {
  Result<Donated> d = Status();
  {
    nb::gil_scoped_release release;  // waits for enqueues in progress
    d = TryDonate(array);
  }
  if (!d.ok()) ThrowDonationError(d.status());
  return std::move(d).value();
}

// A new array with the donated value on the same storage (jit/donation.h).
Array Adopt(Donated& d) { return AdoptDonated(d); }

// After a failed transfer: the value goes back into the marker for a retry.
void Redonate(Donated& d, const Array& adopted) {
  d = ValueOrThrow(TryDonate(adopted));
}

// device_put(bt.donate(x), device, memory_kind): x's storage becomes the
// result when nothing moves; otherwise it is freed once the copy is done.
Array Put(Donated& d, nb::handle device_arg, nb::handle kind_arg) {
  Unspent(d);
  const Array& src = d.array;
  Device* device =
      device_arg.is_none() ? src.device() : ResolveDevice(device_arg);
  const MemoryKind kind =
      kind_arg.is_none() ? src.memory_kind()
                         : MemoryKindFromName(nb::cast<std::string>(kind_arg));
  src.impl()->SetDonationTarget("device_put");
  Array adopted = Adopt(d);
  baton::python::AllocationStackScope stacks;  // while profiling
  if (device == adopted.device() && kind == adopted.memory_kind()) {
    return adopted;
  }
  Result<Array> r = CopyArray(adopted, device, kind);
  if (!r.ok()) {
    Redonate(d, adopted);  // e.g. out of memory
    ThrowIfError(r.status());
  }
  adopted.Delete();  // freed once the copy has read it
  return std::move(r).value();
}

// device_put(bt.donate(x), into=y): x's values into y's storage; x's storage
// is freed once the copy is done. `into` is checked before anything moves.
Array PutInto(Donated& d, const Array& into) {
  Unspent(d);
  const Array& src = d.array;
  if (src.shape() != into.shape() || src.dtype() != into.dtype()) {
    ThrowIfError(InvalidArgument(
        "device_put(into=...): the new value is " + src.impl()->Describe() +
        " but `into` is " + into.impl()->Describe() +
        "; an in-place overwrite needs the same shape and dtype. Nothing was "
        "consumed."));
  }
  auto storage = ValueOrThrow(into.impl()->buffer());
  if (storage->borrowed()) {
    ThrowIfError(InvalidArgument(
        "device_put(into=...): `into` borrows memory it does not own; "
        "nothing was consumed."));
  }
  if (storage->external_references() > 0) {
    ThrowIfError(DonationRefused(
        "Cannot overwrite array " + into.impl()->Describe() + ": it has " +
        std::to_string(storage->external_references()) +
        " live host view(s) or DLPack export(s). Delete those views (or let "
        "them go out of scope) first. Nothing was consumed."));
  }
  src.impl()->SetDonationTarget("device_put(into=...)");
  Array adopted = Adopt(d);
  Result<Array> r = Status();
  {
    nb::gil_scoped_release release;
    r = CopyArrayInto(adopted, into);
  }
  if (!r.ok()) {
    Redonate(d, adopted);
    ThrowIfError(r.status());
  }
  adopted.Delete();
  return std::move(r).value();
}

std::string Repr(const Donated& d) {
  const Array& s = d.array;
  return std::string("Donated(") + s.impl()->Describe() +
         ", memory_kind=" + std::string(memory_kind_name(s.memory_kind())) +
         (Holds(d) ? "" : d.array.IsDeleted() ? ", used" : ", given back") + ")";
}

}  // namespace
}  // namespace baton::python

void init_donation(nb::module_& m) {
  using baton::Donated;
  using namespace baton::python;
  nb::class_<Donated>(
      m, "Donated", nb::type_slots(baton::python::kNotConstructibleSlots),
      "What bt.donate(x) returns: x's storage on its way to the next call "
      "that receives this marker (jit or device_put), which may reuse it for "
      "its result. x itself is already consumed (is_deleted() is True for "
      "every reference). A marker can be passed to one call only.")
      .def_prop_ro("shape",
                   [](const Donated& d) {
                     nb::list l;
                     for (int64_t v : d.array.shape().dims()) l.append(v);
                     return nb::tuple(l);
                   })
      .def_prop_ro("dtype",
                   [](const Donated& d) {
                     return nb::borrow(NumpyDType(d.array.dtype()));
                   })
      .def_prop_ro("nbytes", [](const Donated& d) { return d.array.nbytes(); })
      .def_prop_ro(
          "device", [](const Donated& d) { return d.array.device(); },
          nb::rv_policy::reference)
      .def_prop_ro(
          "memory_kind",
          [](const Donated& d) {
            return std::string(baton::memory_kind_name(d.array.memory_kind()));
          })
      .def_prop_ro(
          "used", [](const Donated& d) { return !Holds(d); },
          "True once the marker can no longer be passed: a call took its "
          "storage, or a failed call gave it back to the array.")
      .def(
          "_set_target",
          [](Donated& d, std::string name) {
            d.array.impl()->SetDonationTarget(std::move(name));
          },
          nb::arg("name"),
          "Names the function the donation went to (the donated array's "
          "DeletedArrayError says so).")
      .def("_put", &Put, nb::arg("device").none(),
           nb::arg("memory_kind").none(),
           "device_put of the donated value; spends the marker.")
      .def("_put_into", &PutInto, nb::arg("into"),
           "device_put(into=) of the donated value; spends the marker.")
      .def(
          "_restore",
          [](Donated& d) {
            Unspent(d);
            d.array.impl()->Untake(std::move(d.taken));
            d.taken = baton::ArrayImpl::Taken{};
          },
          "Undoes the donation: the source array is live again.")
      .def("__repr__", &Repr);

  m.def("_donate", &DonateOne, nb::arg("array"),
        "Donates one array (see bt.donate).");
  m.def(
      "_unusable_donation_message",
      [](const std::string& fn_name, const std::vector<std::string>& arguments,
         bool per_device, bool refused) {
        return baton::UnusableDonationMessage(fn_name, arguments, per_device,
                                              refused);
      },
      nb::arg("fn_name"), nb::arg("arguments"), nb::kw_only(),
      nb::arg("per_device"), nb::arg("refused"),
      "jit's message for donated arguments no output can reuse (see "
      "baton/jit/donation.h): the refusal of the \"error\" donation mode "
      "when `refused`, else the warning.");
}
