// transit._transit: the Python module over transit's C API (transit/transit.h), in batches of NumPy
// arrays. Only the C API is called here: Python reuses that layer rather than binding the C++
// templates a second time.
//
// Lifetimes: a Context owns what is made on it (streamers, arrays, its exchange) and destroys them,
// newest first, before itself in close(). Every destroy is collective, so none runs from a Python
// destructor (garbage collection happens at different times on different ranks): a context not
// closed by the program is closed at interpreter exit (transit/__init__.py), in creation order.
//
// The GIL is released around every call that waits or progresses; a deliver callback takes it
// back. A Python exception raised in a callback is kept, the callback returns nonzero (the C API
// then ends the call that delivered with TRANSIT_CALLBACK_ERROR), and the original exception is
// raised again from that call.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#ifdef TRANSIT_PYTHON_MPI4PY
#include <mpi4py/mpi4py.h>
#endif

#include "transit/transit.h"

namespace py = pybind11;

namespace {

/// What a context owns: destroyed (collectively) by the context's close(), or by its own.
class resource {
 public:
  virtual ~resource() = default;
  /// Collective; called with the GIL released. The C status of the destroy.
  virtual transit_status destroy() = 0;
  bool closed = false;
};

[[noreturn]] void raise_python(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

/// The C API's message in Python's terms: the library's messages name C and C++ calls (a step
/// ends with done() then wait(); the C streamer's items are "C items"), which a Python program
/// never calls.
std::string in_python_terms(std::string message) {
  static const std::pair<const char*, const char*> terms[] = {
      {"streamer<C items>", "transit.Streamer"},
      {" of C items", ""},
      {"streamer::insert", "Streamer.insert"},
      {"streamer::quiesce", "Streamer.quiesce"},
      {"streamer::finish", "Streamer.finish"},
      {"streamer::inserter", "Streamer.insert"},
      {"after done() and before wait() returned", "after finish() began and before it returned"},
      {"after done() in the same step", "after finish() in the same step"},
      {"after the PE called done() in this step", "after finish() began in this step"},
      {"wait() or finish()", "finish()"},
      {"after wait() returns", "after finish() returns"},
      {"in wait()", "in finish()"},
      {"transit_streamer_insert", "Streamer.insert"},
      {"transit_streamer_finish", "Streamer.finish"},
      {"transit_streamer_quiesce", "Streamer.quiesce"},
      {"transit_streamer_destroy", "Streamer.close"},
      {"transit_streamer_create", "Streamer"},
      {"transit_array_create", "GlobalArray"},
      {"transit_array_destroy", "GlobalArray.close"},
      {"transit_array_fetch_add", "GlobalArray.fetch_add"},
      {"transit_array_accumulate", "GlobalArray.accumulate"},
      {"transit_array_put", "GlobalArray.put"},
      {"transit_array_get", "GlobalArray.get"},
      {"transit_array_sync", "GlobalArray.sync"},
      {"transit_array_local", "GlobalArray.local"},
      {"transit_exchange_run", "sparse_exchange"},
      {"transit_exchange_create", "sparse_exchange"},
      {"transit_exchange_destroy", "Context.close"},
      {"transit_context_destroy", "Context.close"},
      {"transit_context_create_mpi", "Context"},
      {"transit_context_create_local", "Context"},
      {"transit_barrier", "Context.barrier"},
      {"transit_allreduce", "Context.allreduce"},
      {"transit_prepare_mpi", "transit.prepare_mpi"},
      {"a deliver callback returned", "deliver returned"},
  };
  for (const auto& [from, to] : terms) {
    const std::string_view f(from);
    for (std::size_t at = message.find(f); at != std::string::npos; at = message.find(f, at + std::strlen(to)))
      message.replace(at, f.size(), to);
  }
  return message;
}

/// Raises the exception of a failed C call: invalid values and indices as ValueError, a missing
/// feature as NotImplementedError, anything else as RuntimeError, with the C API's message.
[[noreturn]] void raise_status(transit_status status, const char* call) {
  std::string message = in_python_terms(transit_last_error());
  if (message.empty()) message = std::string(call) + " failed with status " + std::to_string(static_cast<int>(status));
  switch (status) {
    case TRANSIT_INVALID_ARGUMENT:
    case TRANSIT_OUT_OF_RANGE:
      raise_python(PyExc_ValueError, message);
    case TRANSIT_NOT_BUILT:
      raise_python(PyExc_NotImplementedError, message);
    default:
      raise_python(PyExc_RuntimeError, message);
  }
}

/// Runs a C call with the GIL released (it may wait for other PEs, and progresses transit).
template <typename Call>
transit_status without_gil(Call&& call) {
  py::gil_scoped_release release;
  return call();
}

/// One PE's context, with what was made on it.
class context_core {
 public:
  context_core(transit_context* handle, bool on_mpi) : mpi(on_mpi), handle_(handle) {
    rank = transit_rank(handle);
    size = transit_size(handle);
    // Ctrl-C ends a wait for other PEs (a barrier, a finish) with KeyboardInterrupt: the GIL is
    // released while transit waits, so Python's own handler cannot run until the wait ends.
    if (transit_context_set_interrupt_check(handle, &context_core::interrupted, this) != TRANSIT_OK)
      raise_status(TRANSIT_RUNTIME_ERROR, "Context");
  }
  /// The interrupt check (transit_context_set_interrupt_check), called while a C call waits, GIL
  /// released: runs Python's signal handlers; the exception one raised (KeyboardInterrupt) is
  /// kept, and check() raises it when the interrupted call returns.
  static int interrupted(void* user) {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() == 0) return 0;
    static_cast<context_core*>(user)->keep(py::error_already_set());
    return 1;
  }
  context_core(const context_core&) = delete;
  context_core& operator=(const context_core&) = delete;
  ~context_core() = default;  // never destroys the C context: close() does, collectively

  /// The C handle for a call `what`, on the thread that made the context. Raises ValueError on a
  /// closed context.
  transit_context* open(const char* what) const {
    if (handle_ == nullptr) raise_python(PyExc_ValueError, std::string(what) + ": the transit.Context is closed");
    if (std::this_thread::get_id() != thread_)
      raise_python(PyExc_RuntimeError, std::string(what) +
                                           ": a transit.Context is used on the thread that made it, "
                                           "and this is another thread");
    return handle_;
  }
  bool closed() const noexcept { return handle_ == nullptr; }

  /// After a C call (GIL held): raises a deliver callback's exception if one was kept, else the
  /// call's failure.
  void check(transit_status status, const char* call) {
    if (pending_) {
      py::error_already_set e = std::move(*pending_);
      pending_.reset();
      throw e;
    }
    if (status != TRANSIT_OK) raise_status(status, call);
  }
  /// Keeps the first exception a callback raised during one call (GIL held).
  void keep(py::error_already_set&& e) {
    if (!pending_) pending_ = std::move(e);
  }

  /// After the C call `status` that made `r`: raises its failure, else owns `r`.
  void adopt(std::shared_ptr<resource> r, transit_status status, const char* call) {
    check(status, call);
    children_.push_back(std::move(r));
  }
  /// Collective: destroys one object made on this context.
  void destroy(resource& r, const char* call) {
    if (r.closed) return;
    open(call);
    const transit_status status = without_gil([&] { return r.destroy(); });
    r.closed = true;
    std::erase_if(children_, [&](const std::shared_ptr<resource>& c) { return c.get() == &r; });
    check(status, call);
  }
  /// Collective: destroys what was made on the context, newest first, then the context. A child
  /// that fails to close (a streamer that lost items) does not stop the others nor the context,
  /// whose destroys the other PEs make too: the first failure is raised once all are done.
  void close() {
    if (handle_ == nullptr) return;
    open("Context.close");
    std::optional<py::error_already_set> failed;
    while (!children_.empty()) {
      try {
        destroy(*children_.back(), "Context.close");
      } catch (py::error_already_set& e) {
        if (!failed) failed = std::move(e);
      }
    }
    const transit_status status = without_gil([&] { return transit_context_destroy(handle_); });
    if (status == TRANSIT_OK) handle_ = nullptr;
    if (failed) throw std::move(*failed);
    check(status, "Context.close");
  }

  int rank = 0;
  int size = 0;
  const bool mpi;
  std::shared_ptr<resource> exchange;  // made by the first sparse_exchange, owned by children_ too

 private:
  transit_context* handle_;
  std::thread::id thread_ = std::this_thread::get_id();
  std::vector<std::shared_ptr<resource>> children_;
  std::optional<py::error_already_set> pending_;
};

/// The contexts not closed yet, oldest first: closed at exit, or named in a fatal error. Never
/// destroyed (it holds Python objects, which must not outlive the interpreter in a static).
std::vector<std::shared_ptr<context_core>>& live_contexts() {
  static auto* live = new std::vector<std::shared_ptr<context_core>>;
  return *live;
}

/// What Python holds: a context, shared with the objects made on it.
struct context_handle {
  std::shared_ptr<context_core> core;
};

transit_op parse_op(const std::string& op) {
  if (op == "sum") return TRANSIT_SUM;
  if (op == "min") return TRANSIT_MIN;
  if (op == "max") return TRANSIT_MAX;
  raise_python(PyExc_ValueError, "op: got '" + op + "', expected 'sum', 'min' or 'max'");
}

std::string dtype_name(const py::dtype& dt) { return dt.attr("__str__")().cast<std::string>(); }
std::string text(py::handle obj) { return py::str(obj).cast<std::string>(); }
std::string type_name(py::handle obj) { return py::type::handle_of(obj).attr("__name__").cast<std::string>(); }

/// `obj` as a C-contiguous 1-D NumPy array (a copy only when it is not one already).
py::array as_vector(py::handle obj, const char* what) {
  py::array a = py::array::ensure(obj, py::array::c_style);
  if (!a) {
    PyErr_Clear();
    raise_python(PyExc_ValueError, std::string(what) + ": got a " + type_name(obj) + ", expected a 1-D array");
  }
  if (a.ndim() != 1)
    raise_python(PyExc_ValueError,
                 std::string(what) + ": got an array of " + std::to_string(a.ndim()) + " dimensions, expected 1");
  return a;
}

/// Copies the integers of `a` (any integer dtype) to `out`, each checked to be in [0, bound):
/// the index of the first one outside, or -1. Runs without the GIL (`a` is kept alive by the
/// caller).
template <typename In, typename Out>
std::ptrdiff_t copy_checked(const void* data, std::size_t n, std::uint64_t bound, Out* out) {
  const auto* in = static_cast<const In*>(data);
  for (std::size_t i = 0; i < n; ++i) {
    const In v = in[i];
    if constexpr (std::is_signed_v<In>) {
      if (v < 0) return static_cast<std::ptrdiff_t>(i);
    }
    if (static_cast<std::uint64_t>(v) >= bound) return static_cast<std::ptrdiff_t>(i);
    out[i] = static_cast<Out>(v);
  }
  return -1;
}

/// Indices or destinations, checked against [0, bound) and converted to Out for the C API.
template <typename Out>
class checked_indices {
 public:
  /// `what` names the argument in errors ("dest"), `bound_what` the bound ("a PE").
  checked_indices(py::handle obj, const char* what) : array_(as_vector(obj, what)), what_(what) {
    const py::dtype dt = array_.dtype();
    if (dt.kind() != 'i' && dt.kind() != 'u')
      raise_python(PyExc_ValueError,
                   std::string(what) + ": got dtype " + dtype_name(dt) + ", expected an integer dtype");
    signed_ = dt.kind() == 'i';
    itemsize_ = array_.itemsize();
  }
  std::size_t size() const { return static_cast<std::size_t>(array_.shape(0)); }

  /// Converts into an internal buffer, without the GIL; the first bad position, or -1.
  std::ptrdiff_t convert(std::uint64_t bound) {
    values_.resize(size());
    const void* data = array_.data();
    const bool is_signed = signed_;
    switch (itemsize_) {
      case 1:
        return is_signed ? copy_checked<std::int8_t>(data, size(), bound, values_.data())
                         : copy_checked<std::uint8_t>(data, size(), bound, values_.data());
      case 2:
        return is_signed ? copy_checked<std::int16_t>(data, size(), bound, values_.data())
                         : copy_checked<std::uint16_t>(data, size(), bound, values_.data());
      case 4:
        return is_signed ? copy_checked<std::int32_t>(data, size(), bound, values_.data())
                         : copy_checked<std::uint32_t>(data, size(), bound, values_.data());
      default:
        return is_signed ? copy_checked<std::int64_t>(data, size(), bound, values_.data())
                         : copy_checked<std::uint64_t>(data, size(), bound, values_.data());
    }
  }
  /// Raises the ValueError of a bad position found by convert() (GIL held).
  [[noreturn]] void raise_bad(std::ptrdiff_t position, std::uint64_t bound, const char* bound_what) const {
    const py::object value = array_[py::int_(position)];
    raise_python(PyExc_ValueError, std::string(what_) + "[" + std::to_string(position) + "] = " +
                                       py::str(value).cast<std::string>() + " is out of range: expected " +
                                       bound_what + " in [0, " + std::to_string(bound) + ")");
  }
  const Out* data() const { return values_.data(); }

 private:
  py::array array_;
  const char* what_;
  bool signed_ = true;  // read with the GIL: convert() runs without it
  py::ssize_t itemsize_ = 8;
  std::vector<Out> values_;
};

/// Converts `idx`, checked against [0, bound), and runs `call(converted, count)`, both without the
/// GIL; then raises the ValueError of an index out of range, or what the call failed with.
template <typename Out, typename Call>
void checked_call(context_core& ctx, checked_indices<Out>& idx, std::uint64_t bound, const char* bound_what,
                  const char* what, Call&& call) {
  std::ptrdiff_t bad = -1;
  const transit_status status = without_gil([&] {
    bad = idx.convert(bound);
    return bad < 0 ? call(idx.data(), idx.size()) : TRANSIT_OK;
  });
  if (bad >= 0) idx.raise_bad(bad, bound, bound_what);
  ctx.check(status, what);
}

void check_lengths(std::size_t a, const char* a_what, std::size_t b, const char* b_what) {
  if (a != b)
    raise_python(PyExc_ValueError, std::string(b_what) + ": got " + std::to_string(b) + " values for " +
                                       std::to_string(a) + " " + a_what + ", expected as many");
}

/// The C handle of an object made on a context (a streamer, an array), for a call `what`: raises
/// ValueError when the object or its context is closed.
template <typename Core>
auto open_handle(const Core& core, const char* what, const char* kind) {
  core.ctx->open(what);
  if (core.closed) raise_python(PyExc_ValueError, std::string(what) + ": the transit." + kind + " is closed");
  return core.handle;
}

// ---- Streamer --------------------------------------------------------------------------------------

// ---- Expired deliver views -------------------------------------------------------------------------

constexpr const char* expired_message =
    "this array was handed to deliver() and is valid during that call only: it viewed transit's "
    "buffer, which later deliveries overwrite. Keep items.copy() instead, or make the Streamer with "
    "copy=True to receive arrays of your own";

/// Every slot of ExpiredItems but repr: raises ValueError (expired_message) and returns the
/// slot's failure value (nullptr or -1), whatever its arguments.
template <typename Result, typename... Args>
Result expired(Args...) {
  PyErr_SetString(PyExc_ValueError, expired_message);
  if constexpr (std::is_pointer_v<Result>) {
    return nullptr;
  } else {
    return Result{-1};
  }
}
PyObject* expired_repr(PyObject*) {
  return PyUnicode_FromString("<transit: a deliver() array kept after its call, expired (keep items.copy())>");
}
void expired_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  type->tp_base->tp_dealloc(self);  // ndarray's: frees the array, not the reference to its type
  Py_DECREF(type);
}

/// transit's ExpiredItems: an ndarray subtype of ndarray's very layout (made here, from C, so that
/// it adds no GC header nor dictionary, which a class written in Python would), on which every
/// access raises ValueError (expired_message): attributes and methods, indexing, len, iteration,
/// comparisons, and NumPy's functions and ufuncs (through __array_ufunc__ and
/// __array_function__, which NumPy looks up on the type).
PyTypeObject* expired_type() {
  static PyTypeObject* type = [] {
    static PyMethodDef methods[] = {
        {"__array_ufunc__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&expired<PyObject*, PyObject*, PyObject*, PyObject*>)),
         METH_VARARGS | METH_KEYWORDS, nullptr},
        {"__array_function__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&expired<PyObject*, PyObject*, PyObject*, PyObject*>)),
         METH_VARARGS | METH_KEYWORDS, nullptr},
        {"__array__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&expired<PyObject*, PyObject*, PyObject*, PyObject*>)),
         METH_VARARGS | METH_KEYWORDS, nullptr},
        {nullptr, nullptr, 0, nullptr}};
    static PyType_Slot slots[] = {
        {Py_tp_doc, const_cast<char*>("A deliver() array kept after its call: every access raises ValueError.")},
        {Py_tp_getattro, reinterpret_cast<void*>(&expired<PyObject*, PyObject*, PyObject*>)},
        {Py_tp_repr, reinterpret_cast<void*>(&expired_repr)},
        {Py_tp_str, reinterpret_cast<void*>(&expired_repr)},
        {Py_tp_iter, reinterpret_cast<void*>(&expired<PyObject*, PyObject*>)},
        {Py_tp_richcompare, reinterpret_cast<void*>(&expired<PyObject*, PyObject*, PyObject*, int>)},
        {Py_tp_dealloc, reinterpret_cast<void*>(&expired_dealloc)},
        {Py_tp_methods, methods},
        {Py_mp_subscript, reinterpret_cast<void*>(&expired<PyObject*, PyObject*, PyObject*>)},
        {Py_mp_ass_subscript, reinterpret_cast<void*>(&expired<int, PyObject*, PyObject*, PyObject*>)},
        {Py_mp_length, reinterpret_cast<void*>(&expired<Py_ssize_t, PyObject*>)},
        {Py_sq_length, reinterpret_cast<void*>(&expired<Py_ssize_t, PyObject*>)},
        {Py_sq_contains, reinterpret_cast<void*>(&expired<int, PyObject*, PyObject*>)},
        {Py_nb_bool, reinterpret_cast<void*>(&expired<int, PyObject*>)},
        {Py_nb_int, reinterpret_cast<void*>(&expired<PyObject*, PyObject*>)},
        {Py_nb_float, reinterpret_cast<void*>(&expired<PyObject*, PyObject*>)},
        {Py_nb_index, reinterpret_cast<void*>(&expired<PyObject*, PyObject*>)},
        {0, nullptr}};
    PyTypeObject* ndarray = Py_TYPE(py::array().ptr());
    static PyType_Spec spec = {"transit.ExpiredItems", static_cast<int>(ndarray->tp_basicsize),
                               static_cast<int>(ndarray->tp_itemsize), Py_TPFLAGS_DEFAULT, slots};
    PyObject* bases = PyTuple_Pack(1, reinterpret_cast<PyObject*>(ndarray));
    PyObject* made = bases != nullptr ? PyType_FromSpecWithBases(&spec, bases) : nullptr;
    Py_XDECREF(bases);
    if (made == nullptr) throw py::error_already_set();
    return reinterpret_cast<PyTypeObject*>(made);  // kept for the life of the process
  }();
  return type;
}

/// Makes a deliver view kept after its call unusable: its elements no longer point into transit's
/// buffer (which the next delivery overwrites), and its type becomes ExpiredItems, whose every
/// access raises ValueError saying why. The type is swapped in place, which is sound between types
/// of one layout (expired_type()).
void expire(py::array& view) {
  PyTypeObject* expired = expired_type();
  alignas(std::max_align_t) static char nothing[1];
  auto* a = py::detail::array_proxy(view.ptr());
  a->dimensions[0] = 0;
  a->data = nothing;
  if (Py_TYPE(view.ptr()) == expired->tp_base) {
    Py_INCREF(expired);  // an instance of a heap type holds a reference to it
    Py_SET_TYPE(view.ptr(), expired);
  }
}

class streamer_core : public resource {
 public:
  streamer_core(std::shared_ptr<context_core> context, py::dtype dt, py::object deliver, bool copy)
      : ctx(std::move(context)), dtype(std::move(dt)), copy_(copy), deliver_(std::move(deliver)),
        owner_(py::capsule(this, "transit.delivery")) {}
  transit_status destroy() override { return transit_streamer_destroy(handle); }

  /// The C callback: a NumPy view of the run, read-only and valid during the call only (expired
  /// when the callback kept it), or with copy=True an array of the callback's own.
  static int deliver(const void* items, std::size_t count, void* user) {
    auto& self = *static_cast<streamer_core*>(user);
    py::gil_scoped_acquire gil;
    try {
      if (self.copy_) {
        py::array owned(self.dtype, std::vector<py::ssize_t>{static_cast<py::ssize_t>(count)});
        std::memcpy(owned.mutable_data(), items, count * static_cast<std::size_t>(self.dtype.itemsize()));
        self.deliver_(owned);
        return 0;
      }
      py::array view(self.dtype, {static_cast<py::ssize_t>(count)}, {}, items, self.owner_);
      py::detail::array_proxy(view.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
      // Whatever happens in the call, a view still referenced after it (kept in a list, or by a
      // traceback) is expired: one reference count read per call when none is.
      struct expire_kept {
        py::array& v;
        ~expire_kept() {
          if (v.ref_count() > 1) expire(v);
        }
      } guard{view};
      self.deliver_(view);
      return 0;
    } catch (py::error_already_set& e) {
      self.ctx->keep(std::move(e));
    } catch (const std::exception& e) {  // a C++ failure while making the view or calling
      PyErr_SetString(PyExc_RuntimeError, e.what());
      self.ctx->keep(py::error_already_set());
    }
    return 1;
  }

  std::shared_ptr<context_core> ctx;
  py::dtype dtype;
  transit_streamer* handle = nullptr;

 private:
  bool copy_;
  py::object deliver_;
  py::capsule owner_;  // the views' base: they point into transit's buffer, which they do not own
};

/// What Python holds of a streamer.
struct streamer_handle {
  std::shared_ptr<streamer_core> core;

  /// `items` as a C-contiguous array of the streamer's items. A dtype with a subarray, such as
  /// np.dtype((np.int64, 3)), describes items NumPy shows as rows (n, 3) of the base dtype: such
  /// an array is taken as n items (and deliver receives it in that shape).
  py::array items_of(py::handle items) const {
    const py::object sub = core->dtype.attr("subdtype");
    if (sub.is_none()) return as_vector(items, "items");
    const py::dtype base = sub.cast<py::tuple>()[0].cast<py::dtype>();
    const py::tuple shape = sub.cast<py::tuple>()[1].cast<py::tuple>();
    std::string rows_of = "(n";  // "(n, 3)"
    for (const auto d : shape) rows_of += ", " + text(d);
    rows_of += ")";
    py::array a = py::array::ensure(items, py::array::c_style);
    if (!a) {
      PyErr_Clear();
      raise_python(PyExc_ValueError, "items: got a " + type_name(items) + ", expected an array of shape " + rows_of +
                                         " of " + dtype_name(base));
    }
    const py::tuple got = py::cast<py::tuple>(a.attr("shape"));
    const bool rows = a.ndim() == static_cast<py::ssize_t>(shape.size()) + 1 &&
                      py::tuple(got[py::slice(1, a.ndim(), 1)]).equal(shape);
    if (!rows || !a.dtype().equal(base))
      raise_python(PyExc_ValueError, "items: got an array of shape " + text(got) + " and dtype " +
                                         dtype_name(a.dtype()) + ", expected shape " + rows_of + " and dtype " +
                                         dtype_name(base) + " for the streamer's dtype " + dtype_name(core->dtype));
    return a;  // rows of `base`, contiguous: n items of the streamer's size each
  }

  transit_streamer* open(const char* what) const { return open_handle(*core, what, "Streamer"); }

  void insert(py::handle dest, py::handle items) {
    transit_streamer* s = open("Streamer.insert");
    const std::uint64_t pes = static_cast<std::uint64_t>(core->ctx->size);
    checked_indices<int> dests(dest, "dest");
    py::array it = items_of(items);
    if (core->dtype.attr("subdtype").is_none() && !it.dtype().equal(core->dtype))
      raise_python(PyExc_ValueError, "items: got dtype " + dtype_name(it.dtype()) + ", expected the streamer's dtype " +
                                         dtype_name(core->dtype));
    check_lengths(dests.size(), "destinations", static_cast<std::size_t>(it.shape(0)), "items");
    checked_call(*core->ctx, dests, pes, "a PE", "Streamer.insert", [&](const int* d, std::size_t n) {
      return transit_streamer_insert(s, d, it.data(), n);
    });
  }

  void step(transit_status (*call)(transit_streamer*), const char* what) {
    transit_streamer* s = open(what);
    const transit_status status = without_gil([&] { return call(s); });
    core->ctx->check(status, what);
  }
};

streamer_handle make_streamer(const context_handle& ctx, py::object dtype, py::object deliver, bool copy) {
  transit_context* c = ctx.core->open("Streamer");
  const py::dtype dt = py::dtype::from_args(dtype);
  if (dt.attr("hasobject").cast<bool>())
    raise_python(PyExc_ValueError, "dtype: got " + dtype_name(dt) + ", expected a dtype without Python objects");
  const auto bytes = static_cast<std::size_t>(dt.itemsize());
  if (bytes < 1 || bytes > 65536)
    raise_python(PyExc_ValueError,
                 "dtype: got " + dtype_name(dt) + " of " + std::to_string(bytes) + " bytes, expected 1 to 65536 bytes");
  if (!PyCallable_Check(deliver.ptr()))
    raise_python(PyExc_TypeError, "deliver: got a " + type_name(deliver) +
                                      ", expected a callable taking one array");
  auto core = std::make_shared<streamer_core>(ctx.core, dt, std::move(deliver), copy);
  const transit_status status = without_gil(
      [&] { return transit_streamer_create(c, bytes, &streamer_core::deliver, core.get(), &core->handle); });
  ctx.core->adopt(core, status, "Streamer");
  return streamer_handle{std::move(core)};
}

// ---- GlobalArray -----------------------------------------------------------------------------------

class array_core : public resource {
 public:
  transit_status destroy() override { return transit_array_destroy(handle); }
  std::shared_ptr<context_core> ctx;
  transit_array* handle = nullptr;
  transit_type type = TRANSIT_INT64;
  py::dtype dtype;
  std::size_t size = 0;
};

struct array_handle {
  std::shared_ptr<array_core> core;

  transit_array* open(const char* what) const { return open_handle(*core, what, "GlobalArray"); }

  /// `vals` as a contiguous array of the array's dtype, one per index (a scalar is repeated).
  /// Values that the array's dtype cannot hold exactly by NumPy's "same_kind" rule (floats for an
  /// int64 array) are refused, not truncated.
  py::array values(py::handle vals, std::size_t count, const char* what) const {
    py::module_ np = py::module_::import("numpy");
    py::array v = np.attr("asarray")(vals);
    if (!np.attr("can_cast")(v.dtype(), core->dtype, "same_kind").cast<bool>())
      raise_python(PyExc_ValueError, std::string(what) + ": got dtype " + dtype_name(v.dtype()) +
                                         ", expected values the array's dtype " + dtype_name(core->dtype) + " holds");
    if (v.ndim() == 0) return np.attr("full")(count, v, core->dtype);
    if (v.ndim() != 1)
      raise_python(PyExc_ValueError,
                   std::string(what) + ": got an array of " + std::to_string(v.ndim()) + " dimensions, expected 1");
    check_lengths(count, "indices", static_cast<std::size_t>(v.shape(0)), what);
    return np.attr("ascontiguousarray")(v, core->dtype);
  }

  /// Runs `call(array, indices, count)` on checked indices without the GIL.
  template <typename Call>
  void indexed(checked_indices<std::uint64_t>& idx, const char* what, Call&& call) {
    transit_array* a = open(what);
    checked_call(*core->ctx, idx, core->size, "an index", what,
                 [&](const std::uint64_t* i, std::size_t n) { return call(a, i, n); });
  }

  void put(py::handle indices, py::handle vals) {
    open("GlobalArray.put");
    checked_indices<std::uint64_t> idx(indices, "idx");
    const py::array v = values(vals, idx.size(), "vals");
    indexed(idx, "GlobalArray.put", [&](transit_array* a, const std::uint64_t* i, std::size_t n) {
      return transit_array_put(a, i, v.data(), n);
    });
  }
  py::array get(py::handle indices) {
    open("GlobalArray.get");
    checked_indices<std::uint64_t> idx(indices, "idx");
    py::array out(core->dtype, std::vector<py::ssize_t>{static_cast<py::ssize_t>(idx.size())});
    indexed(idx, "GlobalArray.get", [&](transit_array* a, const std::uint64_t* i, std::size_t n) {
      return transit_array_get(a, i, out.mutable_data(), n);
    });
    return out;
  }
  void accumulate(py::handle indices, py::handle vals, const std::string& op) {
    open("GlobalArray.accumulate");
    const transit_op o = parse_op(op);
    checked_indices<std::uint64_t> idx(indices, "idx");
    const py::array v = values(vals, idx.size(), "vals");
    indexed(idx, "GlobalArray.accumulate", [&](transit_array* a, const std::uint64_t* i, std::size_t n) {
      return transit_array_accumulate(a, i, v.data(), n, o);
    });
  }
  py::array fetch_add(py::handle indices, py::handle deltas) {
    open("GlobalArray.fetch_add");
    checked_indices<std::uint64_t> idx(indices, "idx");
    const py::array d = values(deltas, idx.size(), "deltas");
    py::array olds(core->dtype, std::vector<py::ssize_t>{static_cast<py::ssize_t>(idx.size())});
    indexed(idx, "GlobalArray.fetch_add", [&](transit_array* a, const std::uint64_t* i, std::size_t n) {
      return transit_array_fetch_add(a, i, d.data(), olds.mutable_data(), n);
    });
    return olds;
  }
  void sync() {
    transit_array* a = open("GlobalArray.sync");
    const transit_status status = without_gil([&] { return transit_array_sync(a); });
    core->ctx->check(status, "GlobalArray.sync");
  }
  /// This PE's block, and its first global index.
  std::pair<py::array, std::size_t> local(py::handle owner) {
    transit_array* a = open("GlobalArray.local");
    void* data = nullptr;
    std::size_t first = 0;
    std::size_t count = 0;
    core->ctx->check(transit_array_local(a, &data, &first, &count), "GlobalArray.local");
    return {py::array(core->dtype, {static_cast<py::ssize_t>(count)}, {}, data, owner), first};
  }
};

array_handle make_array(const context_handle& ctx, py::object n, py::object dtype) {
  transit_context* c = ctx.core->open("GlobalArray");
  auto core = std::make_shared<array_core>();
  core->ctx = ctx.core;
  const py::dtype dt = py::dtype::from_args(dtype);
  if (dt.equal(py::dtype::of<std::int64_t>())) {
    core->type = TRANSIT_INT64;
  } else if (dt.equal(py::dtype::of<double>())) {
    core->type = TRANSIT_DOUBLE;
  } else {
    raise_python(PyExc_ValueError, "dtype: got " + dtype_name(dt) + ", expected int64 or float64");
  }
  core->dtype = dt;
  const auto size = py::reinterpret_steal<py::object>(PyNumber_Index(n.ptr()));  // an integer, not a float
  if (!size) throw py::error_already_set();
  if (size < py::int_(0))
    raise_python(PyExc_ValueError, "n: got " + py::str(size).cast<std::string>() + ", expected a size of 0 or more");
  core->size = size.cast<std::size_t>();
  const transit_status status =
      without_gil([&] { return transit_array_create(c, core->size, core->type, &core->handle); });
  ctx.core->adopt(core, status, "GlobalArray");
  return array_handle{std::move(core)};
}

// ---- sparse_exchange ---------------------------------------------------------------------------------

/// The context's exchange, of bytes: each message starts with its dtype (a header), so a PE that
/// sends nothing needs no dtype= to read what it receives, and every PE checks that all send one
/// dtype.
class exchange_core : public resource {
 public:
  transit_status destroy() override { return transit_exchange_destroy(handle); }
  transit_exchange* handle = nullptr;
};

/// A message's header: the dtype's pickle (any dtype, structured and subarray ones too), after its
/// length as 4 little-endian bytes.
std::string dtype_header(const py::dtype& dt) {
  const std::string pickled = py::module_::import("pickle").attr("dumps")(dt).cast<std::string>();
  std::string header(4, '\0');
  for (int i = 0; i < 4; ++i) header[static_cast<std::size_t>(i)] = static_cast<char>((pickled.size() >> (8 * i)) & 0xff);
  return header + pickled;
}

/// The dtype at the start of `message` (`bytes` long) from PE `source`, and the header's length.
std::pair<py::dtype, std::size_t> read_dtype_header(const char* message, std::size_t bytes, int source) {
  std::size_t length = 0;
  for (std::size_t i = 0; i < 4 && i < bytes; ++i) length |= std::size_t{static_cast<unsigned char>(message[i])} << (8 * i);
  if (bytes < 4 || bytes < 4 + length)
    raise_python(PyExc_RuntimeError, "sparse_exchange: PE " + std::to_string(source) + " sent " +
                                         std::to_string(bytes) + " bytes without the dtype that starts every message: "
                                         "every PE must call transit.sparse_exchange");
  const py::object dt = py::module_::import("pickle").attr("loads")(py::bytes(message + 4, length));
  return {dt.cast<py::dtype>(), 4 + length};
}

py::dict sparse_exchange(const context_handle& ctx, const py::dict& sends, py::object dtype) {
  auto& core = *ctx.core;
  transit_context* c = core.open("sparse_exchange");
  std::optional<py::dtype> dt;
  if (!dtype.is_none()) dt = py::dtype::from_args(dtype);
  std::vector<int> peers;
  std::vector<py::array> arrays;
  for (const auto& [key, value] : sends) {
    const py::int_ peer = py::reinterpret_borrow<py::object>(key);
    const long long p = peer.cast<long long>();
    if (p < 0 || p >= core.size)
      raise_python(PyExc_ValueError, "sends: peer " + std::to_string(p) + " is out of range: expected a PE in [0, " +
                                         std::to_string(core.size) + ")");
    py::array a = as_vector(value, "sends[peer]");
    if (!dt) dt = a.dtype();
    if (!a.dtype().equal(*dt))
      raise_python(PyExc_ValueError, "sends[" + std::to_string(p) + "]: got dtype " + dtype_name(a.dtype()) +
                                         ", expected " + dtype_name(*dt) + " as the other arrays");
    peers.push_back(static_cast<int>(p));
    arrays.push_back(std::move(a));
  }
  const std::string header = arrays.empty() ? std::string() : dtype_header(*dt);
  std::vector<std::size_t> counts;
  std::vector<char> items;
  for (const auto& a : arrays) {
    const auto* begin = static_cast<const char*>(a.data());
    items.insert(items.end(), header.begin(), header.end());
    items.insert(items.end(), begin, begin + a.nbytes());
    counts.push_back(header.size() + static_cast<std::size_t>(a.nbytes()));
  }

  if (!core.exchange) {
    auto x = std::make_shared<exchange_core>();
    const transit_status status = without_gil([&] { return transit_exchange_create(c, 1, &x->handle); });
    core.adopt(x, status, "sparse_exchange");
    core.exchange = x;
  }
  auto* x = static_cast<exchange_core*>(core.exchange.get());
  transit_received received{};
  const transit_status status = without_gil([&] {
    return transit_exchange_run(x->handle, peers.data(), counts.data(), peers.size(), items.data(), &received);
  });
  core.check(status, "sparse_exchange");

  py::dict out;
  const auto* all = static_cast<const char*>(received.items);
  for (int source = 0; source < core.size; ++source) {
    const std::size_t begin = received.offsets[source];
    const std::size_t end = received.offsets[source + 1];
    if (begin == end) continue;
    auto [sent, skip] = read_dtype_header(all + begin, end - begin, source);
    if (!dt) dt = sent;  // this PE sent nothing and gave no dtype: the senders' dtype
    if (!sent.equal(*dt))
      raise_python(PyExc_ValueError, "sparse_exchange: PE " + std::to_string(source) + " sent items of dtype " +
                                         dtype_name(sent) + ", this PE " + (sends.empty() ? "expected " : "sent ") +
                                         dtype_name(*dt) + ": every PE must exchange one dtype");
    const std::size_t bytes = end - begin - skip;
    const auto itemsize = static_cast<std::size_t>(dt->itemsize());
    if (bytes == 0) continue;
    py::array run(*dt, std::vector<py::ssize_t>{static_cast<py::ssize_t>(bytes / itemsize)});
    std::memcpy(run.mutable_data(), all + begin + skip, bytes);
    out[py::int_(source)] = run;
  }
  return out;
}

// ---- Context --------------------------------------------------------------------------------------

context_handle adopt_context(transit_context* handle, transit_status status, bool mpi, const char* call) {
  if (status != TRANSIT_OK) raise_status(status, call);
  auto core = std::make_shared<context_core>(handle, mpi);
  live_contexts().push_back(core);
  return context_handle{std::move(core)};
}

context_handle make_local_context() {
  transit_context* handle = nullptr;
  const transit_status status = without_gil([&] { return transit_context_create_local(&handle); });
  return adopt_context(handle, status, false, "Context");
}

context_handle make_mpi_context(py::object comm) {
#ifdef TRANSIT_PYTHON_MPI4PY
  if (import_mpi4py() < 0) throw py::error_already_set();
  MPI_Comm* c = PyMPIComm_Get(comm.ptr());
  if (c == nullptr) throw py::error_already_set();
  transit_context* handle = nullptr;
  const transit_status status = without_gil([&] { return transit_context_create_mpi(c, &handle); });
  return adopt_context(handle, status, true, "Context");
#else
  (void)comm;
  raise_python(PyExc_NotImplementedError, "Context(comm): this transit module was built without MPI and mpi4py");
#endif
}

/// transit.Context(comm): which backend is Python's to say (transit/_env.py: the communicator to
/// attach to, or None for one PE of the local backend).
context_handle make_context(py::object comm, py::object watchdog) {
  const py::module_ env = py::module_::import("transit._env");
  const py::object resolved = env.attr("communicator")(comm);
  // The watchdog is one of the run options the library reads from the environment when a context
  // starts (TRANSIT_WATCHDOG): set for this context's start only.
  const py::object scope = env.attr("watchdog_option")(watchdog);
  py::object entered = scope.attr("__enter__")();
  auto leave = [&] { scope.attr("__exit__")(py::none(), py::none(), py::none()); };
  try {
    context_handle made = resolved.is_none() ? make_local_context() : make_mpi_context(resolved);
    leave();
    return made;
  } catch (...) {
    leave();
    throw;
  }
}

void close_context(const context_handle& c) {
  try {
    c.core->close();
  } catch (...) {
    if (c.core->closed()) std::erase(live_contexts(), c.core);  // closed, then raised what a child lost
    throw;
  }
  std::erase(live_contexts(), c.core);
}

py::object allreduce(const context_handle& ctx, py::object value, const std::string& op) {
  transit_context* c = ctx.core->open("Context.allreduce");
  const transit_op o = parse_op(op);
  py::module_ np = py::module_::import("numpy");
  const bool python_scalar = py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value);
  py::array v = np.attr("asarray")(value);
  py::dtype target = py::dtype::of<double>();
  transit_type type = TRANSIT_DOUBLE;
  if (v.dtype().kind() == 'i' || v.dtype().kind() == 'u' || v.dtype().kind() == 'b') {
    target = py::dtype::of<std::int64_t>();
    type = TRANSIT_INT64;
    if (!np.attr("can_cast")(v.dtype(), target, "safe").cast<bool>())
      raise_python(PyExc_ValueError,
                   "value: got dtype " + dtype_name(v.dtype()) + ", expected integers that int64 holds");
  } else if (v.dtype().kind() != 'f') {
    raise_python(PyExc_ValueError, "value: got dtype " + dtype_name(v.dtype()) + ", expected integers or floats");
  }
  py::array data = np.attr("array")(v, target);  // a copy: reduced in place
  const auto count = static_cast<std::size_t>(data.size());
  const transit_status status = without_gil([&] { return transit_allreduce(c, data.mutable_data(), count, type, o); });
  ctx.core->check(status, "Context.allreduce");
  if (python_scalar) return data.attr("item")();
  if (data.ndim() == 0) return data.attr("__getitem__")(py::tuple());  // a NumPy scalar
  return data;
}

}  // namespace

PYBIND11_MODULE(_transit, m) {
  m.doc() = "transit's C API for Python: use the transit package (import transit), not this module.";
  m.attr("version") = transit_version();

  py::class_<context_handle>(m, "Context", R"(One PE's view of a transit job.

Context(comm=None, *, watchdog=None) is collective. comm: an mpi4py intracommunicator the program
owns (one PE per rank), or None: MPI.COMM_WORLD under an MPI launcher (or once the program has
initialised MPI), else one PE of the local backend. watchdog: seconds without progress after which
a call waiting for other PEs raises RuntimeError with the watchdog's report of what each waits in
(mismatched collective calls, a PE that never arrives), instead of hanging; None leaves it to the
TRANSIT_WATCHDOG environment variable (off by default), 0 turns it off.

Collective calls (barrier, allreduce, close, making streamers and arrays) are made by every PE, in
the same order. Used on the thread that made it. Ctrl-C (SIGINT) ends a call waiting for other PEs
with KeyboardInterrupt; unhandled on an MPI job, it ends the job.)")
      .def(py::init(&make_context), py::arg("comm") = py::none(), py::kw_only(), py::arg("watchdog") = py::none())
      .def("__enter__", [](py::object self) { return self; })
      .def(
          "__exit__",
          [](const context_handle& c, py::object type, py::object, py::object) {
            // Left by an exception on one rank of several: closing is collective and the other
            // ranks may be elsewhere, so the context stays open; unhandled, the exception ends
            // the job (transit/__init__.py).
            if (!type.is_none() && c.core->mpi && c.core->size > 1) return;
            if (type.is_none()) return close_context(c);
            // Left by an exception: what a streamer loses by closing mid-step follows from it (a
            // step it interrupted), so that exception goes on alone, as C++ unwinding does.
            try {
              close_context(c);
            } catch (py::error_already_set&) {
            }
          })
      .def_property_readonly("rank", [](const context_handle& c) { c.core->open("Context.rank"); return c.core->rank; },
                             "This PE, in [0, size).")
      .def_property_readonly("size", [](const context_handle& c) { c.core->open("Context.size"); return c.core->size; },
                             "The PEs of the job.")
      .def_property_readonly("closed", [](const context_handle& c) { return c.core->closed(); },
                             "Whether close() was called.")
      .def_property_readonly("on_mpi", [](const context_handle& c) { return c.core->mpi; },
                             "Whether the context runs on an MPI communicator (else the local backend).")
      .def(
          "barrier",
          [](const context_handle& c) {
            transit_context* h = c.core->open("Context.barrier");
            const transit_status status = without_gil([&] { return transit_barrier(h); });
            c.core->check(status, "Context.barrier");
          },
          "Collective: returns once every PE has called it.")
      .def("allreduce", &allreduce, py::arg("value"), py::arg("op") = "sum",
           "Collective: `value` (an int, a float or an array of them) reduced over all PEs by `op` "
           "('sum', 'min' or 'max'); integers as int64, floats as float64.")
      .def(
          "close",
          &close_context,
          "Collective: destroys the streamers, arrays and exchange made on the context (newest first), "
          "then the context. Idempotent.");

  py::class_<streamer_handle>(m, "Streamer", R"(Items of one NumPy dtype sent to PEs, aggregated.

Streamer(ctx, dtype, deliver, *, copy=False) is collective. dtype: any fixed-size dtype of 1 to
65536 bytes without Python objects (structured ones too; a subarray dtype such as
np.dtype((np.int64, 3)) takes and delivers items as rows of shape (n, 3)). deliver(items) is
called on the destination PE with whole runs of received items as a read-only NumPy array viewing
transit's buffer: no copy, and valid during the call only. The array still referenced after the
call is expired: any access to it raises ValueError (keep items.copy() instead); a view made from
it (items[:10], items.view(...)) is not, so copy those too. With copy=True,
deliver receives arrays of its own, to keep. An exception deliver raises ends the call that
delivered (insert, finish or quiesce) with that exception.)")
      .def(py::init(&make_streamer), py::arg("ctx"), py::arg("dtype"), py::arg("deliver"), py::kw_only(),
           py::arg("copy") = false)
      .def("insert", &streamer_handle::insert, py::arg("dest"), py::arg("items"),
           "Local: sends items[i] to PE dest[i]. Every destination is checked first (ValueError naming "
           "the position, the value and the bound; nothing is sent); items must have the streamer's dtype.")
      .def(
          "finish", [](streamer_handle& s) { s.step(transit_streamer_finish, "Streamer.finish"); },
          "Collective: ends the step; returns once every item inserted by any PE has been delivered.")
      .def(
          "quiesce", [](streamer_handle& s) { s.step(transit_streamer_quiesce, "Streamer.quiesce"); },
          "Collective: as finish, when deliveries insert new items: returns once nothing is in flight.")
      .def_property_readonly("dtype", [](const streamer_handle& s) { return s.core->dtype; }, "The items' dtype.")
      .def(
          "close", [](streamer_handle& s) { s.core->ctx->destroy(*s.core, "Streamer.close"); },
          "Collective, after a finished step: frees the streamer (else its context's close() does). "
          "Closed with items not delivered (inserted since the last finish or quiesce), it is freed "
          "and raises RuntimeError naming it and what was lost; the context stays usable.");

  py::class_<array_handle>(m, "GlobalArray", R"(An array of int64 or float64 spread in blocks over the PEs.

GlobalArray(ctx, n, dtype) is collective and zero-filled. Operations take index arrays (checked
first: ValueError naming the position, the value and the bound) and are visible to every PE
after the next sync().)")
      .def(py::init(&make_array), py::arg("ctx"), py::arg("n"), py::arg("dtype"))
      .def("put", &array_handle::put, py::arg("idx"), py::arg("vals"), "Local: a[idx[i]] = vals[i].")
      .def("get", &array_handle::get, py::arg("idx"), "Local: the array of a[idx[i]].")
      .def("accumulate", &array_handle::accumulate, py::arg("idx"), py::arg("vals"), py::arg("op") = "sum",
           "Local: a[idx[i]] = op(a[idx[i]], vals[i]), op 'sum', 'min' or 'max'.")
      .def("fetch_add", &array_handle::fetch_add, py::arg("idx"), py::arg("deltas"),
           "Local: adds deltas[i] to a[idx[i]]; returns the values before each addition.")
      .def("sync", &array_handle::sync, "Collective: every operation issued before it is complete and visible.")
      .def_property_readonly(
          "local", [](py::object self) { return self.cast<array_handle&>().local(self).first; },
          "This PE's block as a NumPy view (valid while the array is open).")
      .def_property_readonly(
          "local_first", [](py::object self) { return self.cast<array_handle&>().local(self).second; },
          "The global index of this PE's first element.")
      .def_property_readonly("dtype", [](const array_handle& a) { return a.core->dtype; },
                             "The elements' dtype: int64 or float64.")
      .def("__len__", [](const array_handle& a) { return a.core->size; })
      .def(
          "close", [](array_handle& a) { a.core->ctx->destroy(*a.core, "GlobalArray.close"); },
          "Collective: frees the array (else its context's close() does).");

  m.def("sparse_exchange", &sparse_exchange, py::arg("ctx"), py::arg("sends"), py::arg("dtype") = py::none(),
        "Collective: sends each array sends[peer] to PE peer; returns {source: array} of what each PE "
        "sent here (arrays of this PE's own). dtype: that of the arrays sent, optional (each message carries its "
        "dtype; every PE must exchange one dtype, else ValueError naming both).");
  m.def(
      "build_info",
      [] {
        py::dict info;
        info["version"] = transit_version();
#ifdef TRANSIT_PYTHON_LIBRARY_MPI
        info["mpi"] = true;
#else
        info["mpi"] = false;
#endif
#ifdef TRANSIT_PYTHON_MPI4PY
        info["mpi4py"] = true;
        char library[MPI_MAX_LIBRARY_VERSION_STRING];
        int length = 0;
        // One of the calls MPI allows before MPI_Init.
        if (MPI_Get_library_version(library, &length) == MPI_SUCCESS)
          info["mpi_library"] = py::str(std::string(library, std::strlen(library))).attr("strip")();
        else
          info["mpi_library"] = py::none();
#else
        info["mpi4py"] = false;
        info["mpi_library"] = py::none();
#endif
#if defined(__clang__)
        info["compiler"] = "clang " __clang_version__;
#elif defined(__GNUC__)
        info["compiler"] = "gcc " __VERSION__;
#else
        info["compiler"] = py::none();
#endif
        info["cxx_standard"] = static_cast<long>(__cplusplus);
        return info;
      },
      "Local: how this transit module was built, as a dict: version, mpi (the library has its mpi "
      "backend), mpi4py (Context(comm) takes mpi4py communicators), mpi_library (the MPI library's "
      "version string, or None), compiler and cxx_standard (__cplusplus of the module).");
  m.attr("ExpiredItems") = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(expired_type()));
  m.def(
      "_prepare_mpi",
      [] {
        if (const transit_status status = transit_prepare_mpi(); status != TRANSIT_OK && status != TRANSIT_NOT_BUILT)
          raise_status(status, "transit_prepare_mpi");
      },
      "Before MPI starts: Open MPI's settings for transit (transit_prepare_mpi).");
  m.def(
      "_started_by_mpi_launcher", [] { return transit_started_by_mpi_launcher() != 0; },
      "Whether an MPI launcher started this process: the library's rule (transit_started_by_mpi_launcher).");
  m.def("_live_contexts", [] {
    py::list out;
    for (const auto& c : live_contexts()) out.append(context_handle{c});
    return out;
  });
}
