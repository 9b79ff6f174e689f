// The template half of launch(): checks each argument against its parameter, fills the
// KernelId's comptime values and tensor ranks, and binds the argument for the backend. Mistakes
// are Error{launch.bad_argument} naming the kernel, the parameter and what was given.
#pragma once

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

namespace kiln::detail {

template <class A>
std::string given_name() {
  if constexpr (std::is_same_v<A, Handle>) {
    return "a Handle";
  } else if constexpr (std::is_same_v<A, TensorBinding>) {
    return "a TensorBinding";
  } else if constexpr (Element<A>) {
    return "a " + std::string(ir::scalar_name(scalar_of<A>())) + " value";
  } else if constexpr (std::is_enum_v<A>) {
    return "an enum value";
  } else if constexpr (requires { typename A::value_type; } && std::is_same_v<A, Comptime<typename A::value_type>>) {
    return "a comptime value";
  } else {
    return "an argument of another type";
  }
}

[[noreturn]] void bad_argument(std::string_view kernel, size_t index, const std::string& param, const std::string& what);
[[noreturn]] void type_mismatch(std::string_view kernel, size_t index, const std::string& param,
                                std::optional<ir::Scalar> held, ir::Scalar wanted);

// ---- compile-time argument checks -------------------------------------------------------------
// launch<K> knows K's parameters and the C++ types of its arguments, so an argument that can never
// bind (a number where a Slice goes, a Handle where a Scalar goes) or a wrong count is a compile
// error. The error names the parameter: its name travels as a template argument (ParamLabel), which
// the compiler prints in the instantiation that fails. What only the values tell (a handle's element
// type, a number that does not fit) is checked when the launch runs.

template <size_t N>
struct ParamLabel {
  char text[N + 1] = {};
  constexpr ParamLabel(std::string_view s) {  // NOLINT: built from a constexpr name
    for (size_t i = 0; i < N; ++i) text[i] = s[i];
  }
};

template <size_t I>
constexpr auto default_param_label() {
  if constexpr (I < 10) {
    constexpr char name[] = {'a', 'r', 'g', char('0' + I), 0};
    return ParamLabel<4>(std::string_view(name, 4));
  } else {
    constexpr char name[] = {'a', 'r', 'g', char('0' + I / 10), char('0' + I % 10), 0};
    return ParamLabel<5>(std::string_view(name, 5));
  }
}

// K::param_names[I], or "argI" as param_name<K>(I) says it.
template <class K, size_t I>
constexpr auto param_label() {
  if constexpr (HasParamNames<K>) {
    if constexpr (I < std::size(K::param_names)) {
      constexpr std::string_view name = K::param_names[I];
      return ParamLabel<name.size()>(name);
    } else {
      return default_param_label<I>();
    }
  } else {
    return default_param_label<I>();
  }
}

template <class A>
inline constexpr bool kNumber = std::is_arithmetic_v<A> || std::is_same_v<A, f16> || std::is_same_v<A, bf16>;

// Whether a number of C++ type A can become a T for some value: a bool only from a bool, an
// integer from any integer or float (whose value is checked when the launch runs), a float from
// any number.
template <class T, class A>
constexpr bool number_fits() {
  if constexpr (!kNumber<A>) return false;
  else if constexpr (std::is_same_v<T, bool>) return std::is_same_v<A, bool>;
  else if constexpr (std::is_integral_v<T>) return std::is_arithmetic_v<A> && !std::is_same_v<A, bool>;
  else return true;
}

// Whether an argument of C++ type A can bind to parameter P for some value.
template <class P, class A>
constexpr bool argument_fits() {
  using traits = param_traits<P>;
  if constexpr (traits::kind == ParamKind::Buffer) {
    return std::is_same_v<A, Handle>;
  } else if constexpr (traits::kind == ParamKind::Tensor) {
    return std::is_same_v<A, TensorBinding>;
  } else if constexpr (traits::kind == ParamKind::Scalar) {
    return number_fits<typename traits::scalar, A>();
  } else {
    using T = typename traits::value_type;
    if constexpr (std::is_same_v<A, Comptime<T>> || std::is_same_v<A, T>) return true;
    else if constexpr (requires { typename A::value_type; }) {
      // comptime(v) of another number type: the Scalar rule (its value is checked at run time).
      using V = typename A::value_type;
      if constexpr (std::is_same_v<A, Comptime<V>> && std::is_arithmetic_v<V> && std::is_arithmetic_v<T>) {
        return number_fits<T, V>();
      } else {
        return false;
      }
    } else {
      return false;
    }
  }
}

template <class A>
inline constexpr bool kNever = false;

// Instantiated only for an argument that cannot bind; its template arguments name the parameter,
// the parameter's type and the argument's type.
template <ParamLabel Parameter, class ParameterType, class Argument>
struct launch_argument_does_not_fit_parameter {
  static_assert(kNever<Argument>,
                "launch<K>: an argument cannot bind to its kernel parameter (the instantiation shown with this error names "
                "the parameter, its type and the argument's type): "
                "a Slice<T> takes a Handle, a TensorArg<T> a TensorBinding, a Scalar<T> a number of a kind T "
                "holds, a Comptime<T> a T or comptime(value)");
  static constexpr bool ok = false;
};

template <size_t Parameters, size_t Arguments>
struct launch_argument_count {
  static_assert(Parameters == Arguments,
                "launch<K>: the number of arguments after vector_size differs from the number of the kernel's "
                "parameters (the instantiation shown with this error gives both counts)");
  static constexpr bool ok = Parameters == Arguments;
};

template <class K, class P, size_t I, class A>
constexpr bool check_argument() {
  if constexpr (argument_fits<P, A>()) {
    return true;
  } else {
    return launch_argument_does_not_fit_parameter<param_label<K, I>(), P, A>::ok;
  }
}

template <class P>
std::string describe(std::string_view name) {
  using traits = param_traits<P>;
  if constexpr (traits::kind == ParamKind::Comptime) {
    using T = typename traits::value_type;
    if constexpr (Element<T>) return std::string(name) + ": Comptime<" + std::string(ir::scalar_name(scalar_of<T>())) + ">";
    else if constexpr (std::is_enum_v<T>) return std::string(name) + ": Comptime<enum>";
    else return std::string(name) + ": Comptime<" + std::to_string(sizeof(T) * 8) + "-bit integer>";
  } else if constexpr (traits::kind == ParamKind::Scalar) {
    return runtime::describe_param(name, int(traits::kind), false, false, scalar_of<typename traits::scalar>());
  } else {
    return runtime::describe_param(name, int(traits::kind), traits::read_only, traits::info::is_vector,
                                   scalar_of<typename traits::scalar>());
  }
}

// A run-time scalar: any number converts, unless the value would change (300 into u8, 2.5 into
// an integer); floats narrow with rounding.
template <class T, class A>
bool scalar_fits(const A& a, T& out) {
  if constexpr (std::is_same_v<T, bool>) {
    if constexpr (std::is_same_v<A, bool>) {
      out = a;
      return true;
    } else {
      return false;
    }
  } else if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>) {
    // One rounding from the value given, as literals in kernels get (expr.h literal_as).
    if constexpr (std::is_same_v<A, f16> || std::is_same_v<A, bf16>) out = T(static_cast<float>(a));
    else if constexpr (std::is_same_v<A, bool>) out = T(a ? 1.0f : 0.0f);
    else if constexpr (std::is_integral_v<A>) out = T::from_integer(a);
    else out = T(static_cast<double>(a));
    return true;
  } else if constexpr (std::is_floating_point_v<T>) {
    if constexpr (std::is_same_v<A, f16> || std::is_same_v<A, bf16>) out = static_cast<T>(static_cast<float>(a));
    else out = static_cast<T>(a);
    return true;
  } else {
    // integer parameter
    if constexpr (std::is_same_v<A, bool> || std::is_same_v<A, f16> || std::is_same_v<A, bf16>) {
      return false;
    } else if constexpr (std::is_floating_point_v<A>) {
      // Bounds as powers of two, exact in A: T's max rounds up to 2^digits in a float, and a value
      // equal to that would pass a `<= max` test and overflow the conversion.
      const A upper = std::ldexp(A(1), std::numeric_limits<T>::digits);
      const A lower = std::is_signed_v<T> ? -upper : A(0);
      if (!(a == std::trunc(a)) || a < lower || a >= upper) return false;
      out = static_cast<T>(a);
      return true;
    } else {
      if (!std::in_range<T>(a)) return false;
      out = static_cast<T>(a);
      return true;
    }
  }
}

template <class K, class P, size_t I, class A>
void bind_one(const A& arg, KernelId& id, backend::ArgBinding& b, const Handle*& h, int vector_size) {
  using traits = param_traits<P>;
  constexpr ParamKind kind = traits::kind;
  auto fail = [&](const std::string& what) {
    bad_argument(K::name, I, describe<P>(param_name<K>(I)), what);
  };
  if constexpr (kind == ParamKind::Buffer || kind == ParamKind::Tensor) {
    const Handle* handle = nullptr;
    if constexpr (kind == ParamKind::Buffer && std::is_same_v<A, Handle>) {
      handle = &arg;
      b.kind = backend::ArgBinding::Kind::Buffer;
    } else if constexpr (kind == ParamKind::Tensor && std::is_same_v<A, TensorBinding>) {
      if (arg.rank > 8) fail("its rank " + std::to_string(arg.rank) + " is over 8");
      handle = &arg.handle;
      b.kind = backend::ArgBinding::Kind::Tensor;
      b.rank = arg.rank;
      b.shape = arg.shape;
      b.stride = arg.stride;
      id.rank[I] = arg.rank;
    } else {
      static_assert(kNever<A>, "launch_kernel checks argument types before binding");
    }
    if (!handle->valid()) throw Error("handle.invalid", "kernel '" + std::string(K::name) + "', argument " +
                                                          std::to_string(I) + " (" + describe<P>(param_name<K>(I)) +
                                                          "): the handle is empty (default-constructed)");
    if (handle->element() != scalar_of<typename traits::scalar>()) {
      type_mismatch(K::name, I, describe<P>(param_name<K>(I)), handle->element(), scalar_of<typename traits::scalar>());
    }
    size_t elem = sizeof(typename traits::scalar) * size_t(traits::info::is_vector ? vector_size : 1);
    size_t bytes = handle->size_in_used();
    if (bytes % elem != 0) {
      fail("its handle shows " + std::to_string(bytes) + " bytes, which is not a whole number of " +
           std::to_string(elem) + "-byte elements" +
           (traits::info::is_vector ? "; the vector width " + std::to_string(vector_size) + " must divide its length"
                                    : std::string()));
    }
    if (bytes / elem > 0xffffffffull) fail("it has more than 2^32 - 1 elements, more than u32 indexing reaches");
    // Every element is accessed whole (a vector in one 16-byte load on GPUs): the view must start
    // on an element boundary, on every device, so that a kernel that runs on the CPU runs on a GPU.
    if (handle->address() % elem != 0) {
      fail("its view starts " + std::to_string(handle->offset()) + " bytes into its memory, not on a " +
           std::to_string(elem) + "-byte element boundary; offset views by whole elements");
    }
    b.address = handle->address();
    b.bytes = bytes;
    b.len = uint32_t(bytes / elem);
    h = handle;
  } else if constexpr (kind == ParamKind::Scalar) {
    using T = typename traits::scalar;
    if constexpr (std::is_arithmetic_v<A> || std::is_same_v<A, f16> || std::is_same_v<A, bf16>) {
      T v{};
      if (!scalar_fits<T>(arg, v)) fail(given_name<A>() + " was given, and it does not convert to the parameter's type");
      b.kind = backend::ArgBinding::Kind::Scalar;
      std::memcpy(b.scalar.data(), &v, sizeof v);
    } else {
      static_assert(kNever<A>, "launch_kernel checks argument types before binding");
    }
  } else {
    using T = typename traits::value_type;
    constexpr int c = comptime_index<kernel_params_t<K>, I>();
    b.kind = backend::ArgBinding::Kind::Comptime;
    if constexpr (std::is_same_v<A, Comptime<T>>) {
      id.comptime[c] = comptime_bits<T>(arg.get());
    } else if constexpr (std::is_same_v<A, T>) {
      id.comptime[c] = comptime_bits<T>(arg);
    } else if constexpr (requires { typename A::value_type; } && std::is_same_v<A, Comptime<typename A::value_type>> &&
                         std::is_arithmetic_v<typename A::value_type> && std::is_arithmetic_v<T>) {
      // comptime(300) for a Comptime<uint8_t>: refused like a Scalar that does not fit.
      T v{};
      if (!scalar_fits<T>(arg.get(), v)) fail(given_name<A>() + " was given, and its value does not fit the parameter's type");
      id.comptime[c] = comptime_bits<T>(v);
    } else {
      static_assert(kNever<A>, "launch_kernel checks argument types before binding");
    }
  }
}

template <KernelFunction K, class... Args>
void launch_kernel(const Client& client, CubeCount count, CubeDim dim, int vector_size, ir::ExecMode mode,
                   const Args&... args) {
  using Params = kernel_params_t<K>;
  constexpr size_t n = std::tuple_size_v<Params>;
  constexpr bool count_ok = launch_argument_count<n, sizeof...(Args)>::ok;
  constexpr bool types_ok = [] {
    if constexpr (!count_ok) {
      return false;
    } else {
      return [&]<size_t... I>(std::index_sequence<I...>) {
        return (check_argument<K, std::tuple_element_t<I, Params>, I, Args>() && ...);
      }(std::make_index_sequence<n>{});
    }
  }();
  if constexpr (types_ok) {
    if (vector_size != 1 && vector_size != 2 && vector_size != 4 && vector_size != 8 && vector_size != 16) {
      throw Error("launch.bad_argument", "kernel '" + std::string(K::name) + "': vector size " +
                                            std::to_string(vector_size) + " is not one of 1, 2, 4, 8, 16");
    }
    static const KernelId base = kernel_id_base<K>();
    KernelId id = base;
    id.mode = mode;
    id.vector_width = uint8_t(vector_size);
    id.comptime_count = uint8_t(comptime_index<Params, n>());
    std::array<backend::ArgBinding, (n > 0 ? n : 1)> bindings;
    std::array<const Handle*, (n > 0 ? n : 1)> handles{};
    [&]<size_t... I>(std::index_sequence<I...>) {
      (bind_one<K, std::tuple_element_t<I, Params>, I>(args, id, bindings[I], handles[I], vector_size), ...);
    }(std::make_index_sequence<n>{});
    runtime::submit(client, id, &define<K>, count, dim, std::span<backend::ArgBinding>(bindings.data(), n),
                    std::span<const Handle* const>(handles.data(), n));
  }
}

}  // namespace kiln::detail
