// Kernels as function objects, and define(): trace one into an ir::Kernel for a KernelId.
//
//   struct Add {
//     static constexpr std::string_view name = "add";
//     static constexpr std::array<std::string_view, 4> param_names{"x", "y", "out", "relu"};  // optional
//     void operator()(Slice<const float> x, Slice<const float> y, Slice<float> out, Comptime<bool> relu) const;
//   };
//
// A kernel may also allow faster, less exact float math (docs/decisions/0XX-fast-math.md); without
// this member it is exact:
//     static constexpr FastMath fast_math{.contract = true, .approx = true};
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kiln/dsl/memory.h"
#include "kiln/dsl/params.h"
#include "kiln/dsl/trace.h"
#include "kiln/kernel_id.h"

namespace kiln {

enum class ParamKind : uint8_t { Buffer, Tensor, Scalar, Comptime };

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
concept HasParamNames = requires { K::param_names; };

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

template <class Tuple, size_t I>
constexpr int comptime_index() {
  int n = 0;
  [&]<size_t... J>(std::index_sequence<J...>) {
    ((n += param_traits<std::tuple_element_t<J, Tuple>>::kind == ParamKind::Comptime ? 1 : 0), ...);
  }(std::make_index_sequence<I>{});
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
    return traits::make(t.param(param_name<K>(I), traits::type(id, int(I))));
  }
}

}  // namespace detail

template <class K>
concept KernelFunction = requires {
  { K::name } -> std::convertible_to<std::string_view>;
  &K::operator();
};

// Fills the parts of an id that come from K alone: its type, name and parameters' elements.
template <KernelFunction K>
KernelId kernel_id_base() {
  using Params = detail::kernel_params_t<K>;
  static_assert(std::tuple_size_v<Params> <= kMaxParams, "a kernel takes at most 16 parameters");
  static_assert(detail::comptime_index<Params, std::tuple_size_v<Params>>() <= kMaxComptime,
                "a kernel takes at most 8 Comptime parameters");
  KernelId id;
  id.type = &typeid(K);
  id.name = K::name;
  id.fast_math = detail::fast_math_of<K>();
  id.param_count = static_cast<uint8_t>(std::tuple_size_v<Params>);
  [&]<size_t... I>(std::index_sequence<I...>) {
    (
        [&] {
          using traits = param_traits<std::tuple_element_t<I, Params>>;
          if constexpr (traits::kind != ParamKind::Comptime) {
            id.element[I] = scalar_of<typename traits::scalar>();
          }
        }(),
        ...);
  }(std::make_index_sequence<std::tuple_size_v<Params>>{});
  return id;
}

// Traces K into an ir::Kernel specialised for `id` (its comptime values, ranks, vector width,
// cube_dim and mode). Trace errors are thrown as kiln::Error; the result is verified.
template <KernelFunction K>
ir::Kernel define(const KernelId& id) {
  using Params = detail::kernel_params_t<K>;
  ir::Kernel k;
  k.name = std::string(K::name);
  k.facts.cube_dim = id.cube_dim;
  k.facts.mode = id.mode;
  k.facts.address = id.address;
  k.facts.vector_width = id.vector_width;
  k.facts.fast_math = id.fast_math;
  // The id counts every C++ parameter; the kernel's parameters leave out the comptime ones.
  // facts.alias is by kernel parameter, so translate both the position and the value.
  std::array<int, kMaxParams> ir_index{};
  [&]<size_t... I>(std::index_sequence<I...>) {
    int next = 0;
    ((ir_index[I] = param_traits<std::tuple_element_t<I, Params>>::kind == ParamKind::Comptime ? -1 : next++), ...);
  }(std::make_index_sequence<std::tuple_size_v<Params>>{});
  for (int i = 0; i < id.param_count; ++i) {
    uint8_t a = id.alias[size_t(i)];
    if (!a || ir_index[size_t(i)] < 0) continue;
    if (k.facts.alias.empty()) {
      int count = 0;
      for (int j = 0; j < id.param_count; ++j) count += ir_index[size_t(j)] >= 0 ? 1 : 0;
      k.facts.alias.assign(size_t(count), 0);
    }
    k.facts.alias[size_t(ir_index[size_t(i)])] = uint8_t(ir_index[size_t(a - 1)] + 1);
  }
  dsl::Tracer t(k);
  ir::KernelFacts facts = k.facts;
  auto params = [&]<size_t... I>(std::index_sequence<I...>) {
    return std::tuple{detail::make_param<K, std::tuple_element_t<I, Params>, I>(t, id, facts)...};
  }(std::make_index_sequence<std::tuple_size_v<Params>>{});
  k.facts.comptime = facts.comptime;
  std::apply(K{}, params);
  t.finish();
  return k;
}

}  // namespace kiln
