// The typed front of launch: launch<K> refuses at compile time an argument count or an argument
// type that can never bind, then lists its arguments for the run-time entry, which checks values
// (element types, numbers that do not fit, sizes), builds the KernelId and submits.
#pragma once

#include <array>
#include <span>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kiln::detail {

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
  static_assert(
      kNever<Argument>,
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

// The run-time argument for parameter P: a Comptime<T> given as a plain T becomes comptime(T).
template <class P, class A>
Arg to_arg(const A& a) {
  if constexpr (param_traits<P>::kind == ParamKind::Comptime) {
    if constexpr (std::is_same_v<A, typename param_traits<P>::value_type>) return Arg(Comptime<A>(a));
    else return Arg(a);
  } else {
    return Arg(a);
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
      }
      (std::make_index_sequence<n>{});
    }
  }();
  if constexpr (types_ok) {
    static const KernelRef ref = kernel_ref<K>();
    const std::array<Arg, n> list = [&]<size_t... I>(std::index_sequence<I...>) {
      return std::array<Arg, n>{to_arg<std::tuple_element_t<I, Params>>(args)...};
    }
    (std::make_index_sequence<n>{});
    launch(client, ref, LaunchConfig{count, dim, vector_size, mode}, std::span<const Arg>(list.data(), n));
  }
}

}  // namespace kiln::detail
