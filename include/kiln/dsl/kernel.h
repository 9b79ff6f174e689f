// Kernels as function objects: their signature (signature_of<K>), their reference for a launch
// (kernel_ref<K>), and define(): trace one into an ir::Kernel for a KernelId.
//
//   struct Add {
//     static constexpr std::string_view name = "add";
//     static constexpr std::array<std::string_view, 4> param_names{"x", "y", "out", "relu"};  // optional
//     void operator()(Slice<const float> x, Slice<const float> y, Slice<float> out, Comptime<bool> relu) const;
//   };
//
// A kernel may also allow faster, less exact float math (docs/decisions/015-fast-math.md); without
// this member it is exact:
//     static constexpr FastMath fast_math{.contract = true, .approx = true};
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "kiln/dsl/memory.h"
#include "kiln/dsl/params.h"
#include "kiln/dsl/trace.h"
#include "kiln/kernel_id.h"
#include "kiln/kernel_ref.h"

namespace kiln {

// K::fast_math's type: which faster float math the kernel allows (contraction, approximations).
using FastMath = ir::FastMath;

template <class P>
struct param_traits {
  static constexpr bool valid = false;
};

template <class T>
struct param_traits<Slice<T>> {
  static constexpr bool valid = true;
  static constexpr ParamKind kind = ParamKind::Buffer;
  using info = detail::array_element<T>;
  using scalar = typename info::scalar;
  static constexpr bool read_only = info::read_only;
  static ir::Type type(const KernelId& id, int) {
    return ir::Type::buffer(detail::element_type<T>(id.vector_width),
                            read_only ? ir::Access::ReadOnly : ir::Access::ReadWrite);
  }
  static Slice<T> make(dsl::ValueRef r) { return Slice<T>(r); }
};

template <class T>
struct param_traits<TensorArg<T>> {
  static constexpr bool valid = true;
  static constexpr ParamKind kind = ParamKind::Tensor;
  using info = detail::array_element<T>;
  using scalar = typename info::scalar;
  static constexpr bool read_only = info::read_only;
  static ir::Type type(const KernelId& id, int i) {
    return ir::Type::tensor(detail::element_type<T>(id.vector_width), id.rank[size_t(i)],
                            read_only ? ir::Access::ReadOnly : ir::Access::ReadWrite);
  }
  static TensorArg<T> make(dsl::ValueRef r) { return TensorArg<T>(r); }
};

template <class T>
struct param_traits<Scalar<T>> {
  static constexpr bool valid = true;
  static constexpr ParamKind kind = ParamKind::Scalar;
  using scalar = T;
  static ir::Type type(const KernelId&, int) { return ir::Type::scalar_of(scalar_of<T>()); }
  static Scalar<T> make(dsl::ValueRef r) { return Scalar<T>(r); }
};

template <class T>
struct param_traits<Comptime<T>> {
  static constexpr bool valid = true;
  static constexpr ParamKind kind = ParamKind::Comptime;
  using value_type = T;
};

namespace detail {

template <class F>
struct call_traits;
template <class C, class R, class... A>
struct call_traits<R (C::*)(A...) const> {
  using args = std::tuple<std::remove_cvref_t<A>...>;
};
template <class C, class R, class... A>
struct call_traits<R (C::*)(A...)> {
  using args = std::tuple<std::remove_cvref_t<A>...>;
};

template <class K>
using kernel_params_t = typename call_traits<decltype(&K::operator())>::args;

template <class K>
concept HasParamNames = requires {
  K::param_names;
};

// K::fast_math, or exact math when K does not say.
template <class K>
constexpr FastMath fast_math_of() {
  if constexpr (requires { K::fast_math; }) {
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(K::fast_math)>, FastMath>,
                  "a kernel's fast_math is a static constexpr FastMath");
    return K::fast_math;
  } else {
    return FastMath{};
  }
}

// K::cubes_per_processor, or 0 (the backend's choice) when K does not say.
template <class K>
constexpr int cubes_per_processor_of() {
  if constexpr (requires { K::cubes_per_processor; }) {
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(K::cubes_per_processor)>, int>,
                  "a kernel's cubes_per_processor is a static constexpr int");
    static_assert(K::cubes_per_processor >= 1 && K::cubes_per_processor <= ir::Target::kMaxCubesPerProcessor,
                  "a kernel's cubes_per_processor is 1 to 32 (leave it out for the backend's choice)");
    return K::cubes_per_processor;
  } else {
    return 0;
  }
}

template <class Tuple, size_t I>
constexpr int comptime_index() {
  int n = 0;
  [&]<size_t... J>(std::index_sequence<J...>) {
    ((n += param_traits<std::tuple_element_t<J, Tuple>>::kind == ParamKind::Comptime ? 1 : 0), ...);
  }
  (std::make_index_sequence<I>{});
  return n;
}

template <class K>
std::string param_name(size_t i) {
  if constexpr (HasParamNames<K>) {
    if (i < std::size(K::param_names)) return std::string(K::param_names[i]);
  }
  return "arg" + std::to_string(i);
}

template <class K, class P, size_t I>
auto make_param(dsl::Tracer& t, const KernelId& id, ir::KernelFacts& facts) {
  using traits = param_traits<P>;
  static_assert(traits::valid,
                "a kernel parameter is Slice<T>, Slice<const T>, TensorArg<T>, Scalar<T> or Comptime<T>");
  if constexpr (traits::kind == ParamKind::Comptime) {
    using T = typename traits::value_type;
    constexpr int c = comptime_index<kernel_params_t<K>, I>();
    T v = comptime_value<T>(id.comptime[size_t(c)]);
    facts.comptime.emplace_back(param_name<K>(I), id.comptime[size_t(c)].to_string());
    return Comptime<T>(v);
  } else {
    // The id's parameter arrays are by kernel parameter: I less the comptime parameters before it.
    constexpr int p = int(I) - comptime_index<kernel_params_t<K>, I>();
    return traits::make(t.param(param_name<K>(I), traits::type(id, p)));
  }
}

}  // namespace detail

template <class K>
concept KernelFunction = requires {
  { K::name } -> std::convertible_to<std::string_view>;
  &K::operator();
};

template <KernelFunction K>
ir::Kernel define(const KernelId& id);

namespace detail {

// How a comptime parameter of C++ type T is checked and converted at launch: through the kiln
// element of T's kind and width (the integer types that are no kiln element, such as long long,
// by their width; long double as f64; enums as i64, their comptime bits).
template <class T>
constexpr ir::Scalar comptime_scalar() {
  if constexpr (std::is_enum_v<T>) {
    return ir::Scalar::I64;
  } else if constexpr (Element<T>) {
    return scalar_of<T>();
  } else if constexpr (std::is_floating_point_v<T>) {
    return ir::Scalar::F64;
  } else if constexpr (std::is_signed_v<T>) {
    return sizeof(T) == 1   ? ir::Scalar::I8
           : sizeof(T) == 2 ? ir::Scalar::I16
           : sizeof(T) == 4 ? ir::Scalar::I32
                            : ir::Scalar::I64;
  } else {
    return sizeof(T) == 1   ? ir::Scalar::U8
           : sizeof(T) == 2 ? ir::Scalar::U16
           : sizeof(T) == 4 ? ir::Scalar::U32
                            : ir::Scalar::U64;
  }
}

template <class K, class P, size_t I>
ParamSpec param_spec() {
  using traits = param_traits<P>;
  ParamSpec s;
  s.name = param_name<K>(I);
  s.kind = traits::kind;
  if constexpr (traits::kind == ParamKind::Comptime) {
    using T = typename traits::value_type;
    s.element = comptime_scalar<T>();
    if constexpr (std::is_enum_v<T>) s.enum_type = &typeid(T);
    else if constexpr (!Element<T>) s.integer_bits = uint8_t(sizeof(T) * 8);
  } else {
    s.element = scalar_of<typename traits::scalar>();
    s.ir_index = int8_t(I - size_t(comptime_index<kernel_params_t<K>, I>()));
    if constexpr (traits::kind != ParamKind::Scalar) {
      s.read_only = traits::read_only;
      s.vector = traits::info::is_vector;
    }
  }
  return s;
}

template <KernelFunction K>
KernelSignature make_signature() {
  using Params = kernel_params_t<K>;
  constexpr size_t n = std::tuple_size_v<Params>;
  static_assert(n <= size_t(kMaxParams), "a kernel takes at most 16 parameters");
  static_assert(comptime_index<Params, n>() <= kMaxComptime, "a kernel takes at most 8 Comptime parameters");
  KernelSignature sig;
  sig.name = K::name;
  sig.type = &typeid(K);
  sig.kernel_hash = typeid(K).hash_code();
  sig.define = &define<K>;
  sig.count = uint8_t(n);
  sig.ir_count = uint8_t(n - size_t(comptime_index<Params, n>()));
  sig.fast_math = fast_math_of<K>();
  sig.cubes_per_processor = uint8_t(cubes_per_processor_of<K>());
  [&]<size_t... I>(std::index_sequence<I...>) {
    ((sig.params[I] = param_spec<K, std::tuple_element_t<I, Params>, I>()), ...);
  }
  (std::make_index_sequence<n>{});
  return sig;
}

}  // namespace detail

// K's parameters and identity, made once per kernel type.
template <KernelFunction K>
const KernelSignature& signature_of() {
  static const KernelSignature sig = detail::make_signature<K>();
  return sig;
}

// K as a kernel reference, for the run-time launch entry (kiln/runtime/launch.h).
template <KernelFunction K>
KernelRef kernel_ref() {
  return KernelRef(signature_of<K>());
}

// K's descriptors for a launch at `vector_width` with no arguments (tensors' ranks and comptime
// values to fill in by signature position), and the id they make: for tests and tools that trace
// a kernel without launching it.
template <KernelFunction K>
std::vector<ParamDesc> param_descs(int vector_width = 1) {
  return default_descs(signature_of<K>(), vector_width);
}
template <KernelFunction K>
KernelId kernel_id(const LaunchFacts& facts, std::span<const ParamDesc> params) {
  return make_kernel_id(signature_of<K>(), facts, params);
}

// Traces K into an ir::Kernel specialised for `id` (its comptime values, ranks, vector width,
// cube_dim and mode). Trace errors are thrown as kiln::Error; the result is verified.
template <KernelFunction K>
ir::Kernel define(const KernelId& id) {
  using Params = detail::kernel_params_t<K>;
  ir::Kernel k;
  k.name = std::string(K::name);
  k.facts = kernel_facts(id);
  dsl::Tracer t(k);
  ir::KernelFacts facts = k.facts;
  auto params = [&]<size_t... I>(std::index_sequence<I...>) {
    return std::tuple{detail::make_param<K, std::tuple_element_t<I, Params>, I>(t, id, facts)...};
  }
  (std::make_index_sequence<std::tuple_size_v<Params>>{});
  k.facts.comptime = facts.comptime;
  std::apply(K{}, params);
  t.finish();
  return k;
}

}  // namespace kiln
