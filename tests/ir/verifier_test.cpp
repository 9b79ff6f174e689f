// Verifier rules, one case per rule in src/ir/verifier.cpp: each kernel breaks exactly one rule,
// and the error is Error{ir.verify} whose message is "kernel 'NAME': op #N 'OP': RULE", N being
// the op's pre-order number (the one `print` with op_numbers writes). Rules that text cannot
// express (a parameter without a value, a missing region) are built by hand below the table.
#include "kiln/ir/verifier.h"

#include <gtest/gtest.h>

#include <cctype>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/error.h"
#include "kiln/ir/builder.h"
#include "kiln/ir/text.h"

namespace kiln::ir {
namespace {

struct RuleCase {
  const char* name;  // also the kernel's name
  const char* body;  // ops of the kernel body, one per line
  int op_number;
  const char* op;
  const char* rule;  // the rule text, exactly
};

// Parameters every case may use.
std::string kernel_text(const RuleCase& c) {
  return std::string("kernel @") + c.name +
         "(%x: buffer<f32, ro>, %y: buffer<f32, rw>, %v: buffer<vector<4 x f32>, rw>, %u: buffer<u32, rw>, "
         "%t: tensor<f32, 2, ro>, %n: u32, %f: f32, %b: bool) "
         "{cube_dim = [32, 1, 1], mode = checked, address = u32, vector = 4} {\n" +
         c.body + "}\n";
}

const RuleCase kRules[] = {
    // structure
    {"operand_count", "%0 = add %f : f32\n", 1, "add", "takes 2 operands, has 1"},
    {"operand_count_range", "%0 = load %x : f32\n", 1, "load", "takes 2 to 3 operands, has 1"},
    {"use_of_value_from_closed_if", "if %b {\n%0 = add %f, %f : f32\n}\n%1 = neg %0 : f32\n", 3, "neg",
     "operand 0 is not defined here (used outside the region that defines it, or before)"},
    {"use_of_then_value_in_else", "if %b {\n%0 = add %f, %f : f32\n} else {\n%1 = neg %0 : f32\n}\n", 3, "neg",
     "operand 0 is not defined here (used outside the region that defines it, or before)"},
    {"use_of_induction_value_after_loop",
     "%0 = const 0 : u32\n%1 = const 1 : u32\nfor %0, %n, %1 (%2: u32) {\n}\n%3 = add %n, %2 : u32\n", 4, "add",
     "operand 1 is not defined here (used outside the region that defines it, or before)"},
    {"needs_a_result", "add %f, %f\n", 1, "add", "needs a result"},
    {"defines_a_result_it_does_not_have", "%0 = sync.cube : u32\n", 1, "sync.cube", "has no result, but defines one"},
    {"its_regions_take_no_arguments", "if %b (%0: u32) {\n}\n", 1, "if", "its regions take no arguments"},
    // constants
    {"constant_of_a_var_type", "%0 = const 1 : var<u32>\n", 1, "const",
     "a constant is a scalar or vector value, not var<u32>"},
    // arithmetic
    {"add_type_mismatch", "%0 = cast %f : i32\n%1 = add %f, %0 : f32\n", 2, "add",
     "operands have different types: f32 and i32"},
    {"arithmetic_on_a_buffer", "%0 = add %x, %x : f32\n", 1, "add", "operand 0 is buffer<f32, ro>, not a value"},
    {"arithmetic_on_bool", "%0 = add %b, %b : bool\n", 1, "add", "arithmetic is not defined on bool"},
    {"arithmetic_result_type", "%0 = mul %f, %f : f64\n", 1, "mul", "result type is f64, expected f32"},
    {"neg_of_unsigned", "%0 = neg %n : u32\n", 1, "neg", "not defined on u32"},
    {"abs_of_bool", "%0 = abs %b : bool\n", 1, "abs", "not defined on bool"},
    {"fma_of_integers", "%0 = fma %n, %n, %n : u32\n", 1, "fma", "fma takes floats, not u32"},
    // bitwise
    {"bitwise_on_float", "%0 = and %f, %f : f32\n", 1, "and", "takes integers or bools, not f32"},
    {"shift_of_bool", "%0 = shl %b, %b : bool\n", 1, "shl", "takes integers, not bool"},
    {"not_of_float", "%0 = not %f : f32\n", 1, "not", "takes integers or bools, not f32"},
    {"popcount_of_float", "%0 = popcount %f : u32\n", 1, "popcount", "takes integers, not f32"},
    {"leading_zeros_result", "%0 = leading_zeros %n : i32\n", 1, "leading_zeros", "result type is i32, expected u32"},
    {"trailing_zeros_of_a_float", "%0 = trailing_zeros %f : u32\n", 1, "trailing_zeros", "takes integers, not f32"},
    {"copysign_of_integers", "%0 = copysign %n, %n : u32\n", 1, "copysign", "takes floats, not u32"},
    {"copysign_mixed", "%0 = cast %f : f64\n%1 = copysign %f, %0 : f32\n", 2, "copysign",
     "operands have different types: f32 and f64"},
    // compare, select
    {"compare_result_is_bool", "%0 = cmp.lt %f, %f : f32\n", 1, "cmp.lt", "result type is f32, expected bool"},
    {"select_values_differ", "%0 = select %b, %f, %n : f32\n", 1, "select",
     "operands have different types: f32 and u32"},
    {"select_condition_lanes",
     "%0 = load %v, %n {checked} : vector<4 x f32>\n%1 = const true : vector<2 x bool>\n"
     "%2 = select %1, %0, %0 : vector<4 x f32>\n",
     3, "select", "the condition must be bool with 1 or 4 lanes, is vector<2 x bool>"},
    // casts
    {"cast_changing_lanes", "%0 = load %v, %n {checked} : vector<4 x f32>\n%1 = cast %0 : vector<2 x i32>\n", 2, "cast",
     "casts vector<4 x f32> to vector<2 x i32>: lanes must agree"},
    {"bitcast_changing_size", "%0 = bitcast %f : f64\n", 1, "bitcast", "bitcasts f32 to f64: sizes must agree"},
    // vectors
    {"vector_construct_of_vectors",
     "%0 = load %v, %n {checked} : vector<4 x f32>\n%1 = vector.construct %0, %0 : vector<8 x f32>\n", 2,
     "vector.construct", "takes scalars"},
    {"vector_construct_of_three_lanes", "%0 = vector.construct %f, %f, %f : vector<4 x f32>\n", 1, "vector.construct",
     "takes one of 2, 4, 8, 16 lanes, has 3"},
    {"vector_construct_result", "%0 = vector.construct %f, %f : vector<4 x f32>\n", 1, "vector.construct",
     "result type is vector<4 x f32>, expected vector<2 x f32>"},
    {"vector_extract_of_a_scalar", "%0 = vector.extract %f {lane = 0} : f32\n", 1, "vector.extract",
     "takes a vector, not f32"},
    {"vector_extract_lane_out_of_range",
     "%0 = load %v, %n {checked} : vector<4 x f32>\n%1 = vector.extract %0 {lane = 4} : f32\n", 2, "vector.extract",
     "lane 4 is outside vector<4 x f32>"},
    {"vector_insert_of_another_type",
     "%0 = load %v, %n {checked} : vector<4 x f32>\n%1 = vector.insert %0, %n {lane = 0} : vector<4 x f32>\n", 2,
     "vector.insert", "inserts u32 into vector<4 x f32>"},
    {"vector_insert_lane_out_of_range",
     "%0 = load %v, %n {checked} : vector<4 x f32>\n%1 = vector.insert %0, %f {lane = -1} : vector<4 x f32>\n", 2,
     "vector.insert", "lane -1 is outside vector<4 x f32>"},
    {"vector_splat_of_a_vector",
     "%0 = load %v, %n {checked} : vector<4 x f32>\n%1 = vector.splat %0 : vector<4 x f32>\n", 2, "vector.splat",
     "splats a scalar, not vector<4 x f32>"},
    {"vector_splat_result", "%0 = vector.splat %f : vector<4 x i32>\n", 1, "vector.splat",
     "result must be a vector of f32"},
    // builtins and array metadata
    {"builtin_axis", "%0 = builtin.unit_pos {axis = 3} : u32\n", 1, "builtin.unit_pos", "axis must be 0, 1 or 2"},
    {"builtin_result", "%0 = builtin.cube_dim : i32\n", 1, "builtin.cube_dim", "result type is i32, expected u32"},
    {"len_of_a_scalar", "%0 = len %f : u32\n", 1, "len", "takes an array (buffer, tensor, shared or local), not f32"},
    {"tensor_shape_of_a_buffer", "%0 = tensor.shape %x {dim = 0} : u32\n", 1, "tensor.shape",
     "takes a tensor, not buffer<f32, ro>"},
    {"tensor_stride_dim", "%0 = tensor.stride %t {dim = 2} : u32\n", 1, "tensor.stride",
     "dim 2 is outside a tensor of rank 2"},
    // loads and stores
    {"load_of_a_scalar", "%0 = load %f, %n : f32\n", 1, "load",
     "takes an array (buffer, tensor, shared or local), not f32"},
    {"load_index_not_integer", "%0 = load %x, %f {checked} : f32\n", 1, "load",
     "the index must be a scalar integer, is f32"},
    {"load_result", "%0 = load %x, %n {checked} : f64\n", 1, "load", "result type is f64, expected f32"},
    {"store_to_read_only_buffer", "store %x, %n, %f {checked}\n", 1, "store", "writes read-only buffer<f32, ro> 'x'"},
    {"store_value_type", "store %y, %n, %n {checked}\n", 1, "store", "value has type u32, the array holds f32"},
    {"store_mask_not_bool", "store %y, %n, %f, %n {checked}\n", 1, "store", "the mask must be bool, is u32"},
    {"checked_on_a_shared_array", "%0 = shared.alloc : shared<f32, 4>\nstore %0, %n, %f {checked}\n", 2, "store",
     "only global buffer accesses carry 'checked'"},
    {"shared_alloc_result", "%0 = shared.alloc : local<f32, 4>\n", 1, "shared.alloc",
     "result must be a shared array of length > 0"},
    {"shared_alloc_overlay_negative", "%0 = shared.alloc {overlay = -1} : shared<f32, 4>\n", 1, "shared.alloc",
     "overlay must be a group number, 0 or greater"},
    {"local_alloc_of_length_zero", "%0 = local.alloc : local<f32, 0>\n", 1, "local.alloc",
     "result must be a local array of length > 0"},
    // atomics
    {"atomic_on_a_local_array", "%0 = local.alloc : local<u32, 4>\n%1 = atomic.add %0, %n, %n : u32\n", 2, "atomic.add",
     "atomics work on global buffers and shared arrays, not local<u32, 4>"},
    {"atomic_on_vectors", "%0 = atomic.add %v, %n, %f {checked} : f32\n", 1, "atomic.add",
     "atomics work on scalar elements, not vector<4 x f32>"},
    {"atomic_max_on_float", "%0 = atomic.max %y, %n, %f {checked} : f32\n", 1, "atomic.max", "no atomic max on f32"},
    {"atomic_on_read_only_buffer", "%0 = atomic.add %x, %n, %f {checked} : f32\n", 1, "atomic.add",
     "writes read-only buffer<f32, ro> 'x'"},
    {"atomic_cas_desired_type", "%0 = atomic.cas %u, %n, %n, %f {checked} : u32\n", 1, "atomic.cas",
     "value has type f32, the array holds u32"},
    {"atomic_result", "%0 = atomic.add %u, %n, %n {checked} : i32\n", 1, "atomic.add",
     "result type is i32, expected u32"},
    // plane
    {"plane_sum_of_bool", "%0 = plane.sum %b : bool\n", 1, "plane.sum", "takes numbers, not bool"},
    {"plane_all_of_an_integer", "%0 = plane.all %n : bool\n", 1, "plane.all", "the predicate must be bool, is u32"},
    {"plane_ballot_result", "%0 = plane.ballot %b : bool\n", 1, "plane.ballot", "result type is bool, expected u32"},
    {"plane_elect_result", "%0 = plane.elect : u32\n", 1, "plane.elect", "result type is u32, expected bool"},
    {"plane_shuffle_lane_type", "%0 = plane.shuffle %f, %f : f32\n", 1, "plane.shuffle",
     "the lane must be u32, is f32"},
    // vars
    {"var_decl_result", "%0 = var.decl : u32\n", 1, "var.decl", "result must be a var"},
    {"var_load_of_a_value", "%0 = var.load %f : f32\n", 1, "var.load", "takes a var, not f32"},
    {"var_store_to_a_value", "var.store %f, %f\n", 1, "var.store", "takes a var, not f32"},
    {"var_store_type", "%0 = var.decl : var<f32>\nvar.store %0, %n\n", 2, "var.store", "stores u32 into var<f32>"},
    // control flow
    {"if_condition_not_bool", "if %n {\n}\n", 1, "if", "the condition must be bool, is u32"},
    {"for_bounds_not_integers", "for %f, %f, %f (%0: f32) {\n}\n", 1, "for",
     "the lower bound must be a scalar integer, is f32"},
    {"for_bounds_of_two_types", "%0 = const 0 : i32\n%1 = const 1 : i32\nfor %0, %n, %1 (%2: i32) {\n}\n", 3, "for",
     "operands have different types: i32 and u32"},
    {"for_induction_type", "%0 = const 0 : u32\n%1 = const 1 : u32\nfor %0, %n, %1 (%2: i32) {\n}\n", 3, "for",
     "the body takes one induction value of type u32"},
    {"unroll_zero", "%0 = const 0 : u32\n%1 = const 1 : u32\nfor %0, %n, %1 {unroll = 0} (%2: u32) {\n}\n", 3, "for",
     "Loop attribute unroll must be 1 or greater"},
    {"prefetch_stages_negative",
     "%0 = const 0 : u32\n%1 = const 1 : u32\nfor %0, %n, %1 {prefetch_stages = -1} (%2: u32) {\n}\n", 3, "for",
     "Loop attribute prefetch_stages must be 0 or greater"},
    {"vectorize_three", "%0 = const 0 : u32\n%1 = const 1 : u32\nfor %0, %n, %1 {vectorize = 3} (%2: u32) {\n}\n", 3,
     "for", "Loop attribute vectorize must be one of 2, 4, 8, 16"},
    // wide accesses and check.trips
    {"wide_load_of_five_lanes", "%0 = load %x, %n {lanes = 5} : vector<4 x f32>\n", 1, "load",
     "lanes must be one of 2, 4, 8, 16"},
    {"wide_load_result_type", "%0 = load %x, %n {lanes = 4} : f32\n", 1, "load",
     "result type is f32, expected vector<4 x f32>"},
    {"wide_load_of_a_vector_buffer", "%0 = load %v, %n {lanes = 2} : vector<2 x f32>\n", 1, "load",
     "a wide access reads a global array of scalars, not buffer<vector<4 x f32>, rw>"},
    {"wide_load_with_a_mask", "%0 = load %x, %n, %b {lanes = 4} : vector<4 x f32>\n", 1, "load",
     "a wide access takes no mask"},
    {"wide_load_checked", "%0 = load %x, %n {checked, lanes = 4} : vector<4 x f32>\n", 1, "load",
     "a wide access is never 'checked' (its range is tested before the loop)"},
    {"wide_store_of_a_scalar", "store %y, %n, %f {lanes = 4}\n", 1, "store",
     "a wide store of 4 lanes stores vector<4 x f32>, not f32"},
    {"wide_store_into_read_only", "%0 = load %x, %n {lanes = 2} : vector<2 x f32>\nstore %x, %n, %0 {lanes = 2}\n", 2,
     "store", "writes read-only buffer<f32, ro>"},
    {"check_trips_without_loop", "%0 = const 0 : u32\ncheck.trips %0, %n\n", 2, "check.trips",
     "needs the attribute 'loop'"},
    {"check_trips_of_loop_zero", "%0 = const 0 : u32\ncheck.trips %0, %n {loop = 0}\n", 2, "check.trips",
     "needs loop = N (1 or greater): which at_least_once loop it checks"},
    {"check_trips_of_two_types", "%0 = const 0 : i32\ncheck.trips %0, %n {loop = 1}\n", 2, "check.trips",
     "operands have different types: i32 and u32"},
    {"while_without_condition", "while {\n} do {\n}\n", 1, "while", "the condition region must end with 'condition'"},
    {"condition_outside_a_while", "condition %b\n", 1, "condition",
     "'condition' ends a while's condition region and appears nowhere else"},
    {"condition_not_last_in_its_region", "while {\ncondition %b\ncondition %b\n} do {\n}\n", 2, "condition",
     "'condition' ends a while's condition region and appears nowhere else"},
    {"condition_in_a_while_body", "while {\ncondition %b\n} do {\ncondition %b\n}\n", 3, "condition",
     "'condition' ends a while's condition region and appears nowhere else"},
    {"condition_in_an_if_inside_the_condition_region", "while {\nif %b {\ncondition %b\n}\ncondition %b\n} do {\n}\n",
     3, "condition", "'condition' ends a while's condition region and appears nowhere else"},
    {"condition_not_bool", "while {\ncondition %n\n} do {\n}\n", 2, "condition", "the condition must be bool, is u32"},
    {"break_outside_a_loop", "break\n", 1, "break", "is only allowed inside the body of a for or while loop"},
    {"continue_outside_a_loop", "if %b {\ncontinue\n}\n", 2, "continue",
     "is only allowed inside the body of a for or while loop"},
    {"break_in_a_while_condition_region",
     "%0 = const 0 : u32\n%1 = const 1 : u32\nfor %0, %n, %1 (%2: u32) {\nwhile {\nbreak\ncondition %b\n} do {\n}\n}\n",
     5, "break", "is only allowed inside the body of a for or while loop"},
    // control flow that carries values (loop arguments and results, ifs with results)
    {"two_results_on_an_op_with_one", "%0, %1 = add %f, %f : f32, f32\n", 1, "add", "has 2 results, needs 1"},
    {"for_results_not_the_carried_values",
     "%0 = const 0 : u32\n%1 = const 1 : u32\n%2 = for %0, %n, %1, %f : u32 (%3: u32, %4: f32) {\nyield %4\n}\n", 3,
     "for", "the results must be the carried values: f32, not u32"},
    {"for_body_arguments_not_the_carried_values",
     "%0 = const 0 : u32\n%1 = const 1 : u32\n%2 = for %0, %n, %1, %f : f32 (%3: u32) {\n}\n", 3, "for",
     "the body's arguments after the induction value must be the carried values: f32, not nothing"},
    {"for_body_without_yield",
     "%0 = const 0 : u32\n%1 = const 1 : u32\n%2 = for %0, %n, %1, %f : f32 (%3: u32, %4: f32) {\n"
     "%5 = add %4, %f : f32\n}\n",
     3, "for", "the body must end with 'yield' of f32, or with break, continue or terminate"},
    {"for_carries_a_buffer",
     "%0 = const 0 : u32\n%1 = const 1 : u32\n%2 = for %0, %n, %1, %x : buffer<f32, ro> (%3: u32, %4: buffer<f32, ro>) "
     "{\nyield %4\n}\n",
     3, "for", "carries buffer<f32, ro>; control flow carries scalars, vectors and register tiles"},
    {"loop_result_used_in_its_body",
     "%0 = const 0 : u32\n%1 = const 1 : u32\n%2 = for %0, %n, %1, %f : f32 (%3: u32, %4: f32) {\n"
     "%5 = add %2, %4 : f32\nyield %5\n}\n",
     4, "add", "operand 0 is not defined here (used outside the region that defines it, or before)"},
    {"yield_of_the_wrong_type",
     "%0 = const 0 : u32\n%1 = const 1 : u32\n%2 = for %0, %n, %1, %f : f32 (%3: u32, %4: f32) {\nyield %n\n}\n", 4,
     "yield", "must carry f32, not u32"},
    {"yield_in_a_loop_that_carries_nothing",
     "%0 = const 0 : u32\n%1 = const 1 : u32\nfor %0, %n, %1 (%2: u32) {\nyield %f\n}\n", 4, "yield",
     "ends a region of an if, for or while body that carries values, and appears nowhere else"},
    {"yield_not_last",
     "%0 = const 0 : u32\n%1 = const 1 : u32\n%2 = for %0, %n, %1, %f : f32 (%3: u32, %4: f32) {\nyield %4\n"
     "yield %4\n}\n",
     4, "yield", "must be the last op of its region"},
    {"yield_in_a_while_condition_region",
     "%0 = while %f : f32 (%1: f32) {\nyield %1\ncondition %b, %1\n} do (%2: f32) {\nyield %2\n}\n", 2, "yield",
     "ends a region of an if, for or while body that carries values, and appears nowhere else"},
    {"break_without_the_loop_results",
     "%0 = const 0 : u32\n%1 = const 1 : u32\n%2 = for %0, %n, %1, %f : f32 (%3: u32, %4: f32) {\nbreak\n}\n", 4,
     "break", "must carry the loop's results: f32, not nothing"},
    {"continue_of_the_wrong_type",
     "%0 = const 0 : u32\n%1 = const 1 : u32\n%2 = for %0, %n, %1, %f : f32 (%3: u32, %4: f32) {\nif %b {\ncontinue "
     "%n\n}\nyield %4\n}\n",
     5, "continue", "must carry what the loop's body yields: f32, not u32"},
    {"break_carries_values_of_a_loop_that_carries_none",
     "%0 = const 0 : u32\n%1 = const 1 : u32\nfor %0, %n, %1 (%2: u32) {\nbreak %f\n}\n", 4, "break",
     "must carry the loop's results: nothing, not f32"},
    {"if_with_results_without_else", "%0 = if %b : f32 {\nyield %f\n}\n", 1, "if",
     "the else region must end with 'yield' of f32, or with break, continue or terminate"},
    {"if_yield_count", "%0, %1 = if %b : f32, f32 {\nyield %f\n} else {\nyield %f, %f\n}\n", 2, "yield",
     "must carry f32, f32, not f32"},
    {"while_condition_arguments_not_the_initial_values",
     "%0 = while %f : u32 (%1: u32) {\ncondition %b, %1\n} do (%2: u32) {\nyield %2\n}\n", 1, "while",
     "the condition region's arguments must be the initial values: f32, not u32"},
    {"while_body_arguments_not_what_condition_passes_on",
     "%0 = while %f : f32 (%1: f32) {\ncondition %b, %1\n} do (%2: u32) {\nyield %f\n}\n", 1, "while",
     "the body's arguments must be what 'condition' passes on: f32, not u32"},
    {"while_results_not_what_condition_passes_on",
     "%0 = while %f : u32 (%1: f32) {\ncondition %b, %1\n} do (%2: f32) {\nyield %2\n}\n", 1, "while",
     "the results must be what 'condition' passes on: f32, not u32"},
    {"while_body_yields_what_condition_takes",
     "%0 = while %f : u32 (%1: f32) {\n%2 = cast %1 : u32\ncondition %b, %2\n} do (%3: u32) {\nyield %3\n}\n", 4,
     "yield", "must carry f32, not u32"},
    // the tile layer: stated types the rules disagree with
    {"tile_view_of_another_element",
     "%0 = tile.view %x {extent = [64], tile = [64], along = [0], pad = zero} : tile<[64] x f64, global>\n", 1,
     "tile.view", "a view of buffer<f32, ro> is a global tile of f32, not tile<[64] x f64, global>"},
    {"tile_load_cell_result",
     "%0 = tile.view %x {extent = [64], tile = [64], along = [0], pad = zero} : tile<[64] x f32, global>\n"
     "%1 = tile.load_cell %0 : tile<[32] x f32, registers>\n",
     2, "tile.load_cell", "result type is tile<[32] x f32, registers>, expected tile<[64] x f32, registers>"},
    {"tile_exp_of_another_shape",
     "%0 = tile.full {value = 1.0} : tile<[64] x f32, registers>\n%1 = exp %0 : tile<[32] x f32, registers>\n", 2,
     "exp", "gives tile<[32] x f32, registers> from tile<[64] x f32, registers>"},
    {"tile_compare_result_not_bool",
     "%0 = tile.full {value = 1.0} : tile<[64] x f32, registers>\n%1 = cmp.lt %0, %0 : tile<[64] x f32, registers>\n",
     2, "cmp.lt", "result type is tile<[64] x f32, registers>, expected tile<[64] x bool, registers>"},
    {"tile_mma_result",
     "%0 = tile.full {value = 1.0} : tile<[16, 16] x f32, registers>\n"
     "%1 = tile.mma %0, %0, %0 : tile<[16, 16] x f64, registers>\n",
     2, "tile.mma", "result type is tile<[16, 16] x f64, registers>, expected tile<[16, 16] x f32, registers>"},
    {"tile_reduce_keepdims_result",
     "%0 = tile.full {value = 1.0} : tile<[16, 16] x f32, registers>\n"
     "%1 = tile.reduce_sum %0 {dim = 1, keepdims} : tile<[16] x f32, registers>\n",
     2, "tile.reduce_sum", "result type is tile<[16] x f32, registers>, expected tile<[16, 1] x f32, registers>"},
    // debug
    {"debug_print_without_format", "debug.print %f\n", 1, "debug.print", "needs the attribute 'format'"},
    {"debug_print_format_not_a_string", "debug.print %f {format = 3}\n", 1, "debug.print",
     "attribute 'format' must be a string"},
    {"tile_view_pad_as_text",
     "%0 = tile.view %x {extent = [64], tile = [64], along = [0], pad = \"zero\"} : tile<[64] x f32, global>\n", 1,
     "tile.view", "attribute 'pad' must be a padding value (zero, neg_zero, pos_inf, neg_inf, nan)"},
    {"tile_view_without_pad",
     "%0 = tile.view %x {extent = [64], tile = [64], along = [0]} : tile<[64] x f32, global>\n", 1, "tile.view",
     "needs the attribute 'pad'"},
    {"load_with_a_foreign_attribute", "%0 = const 0 : u32\n%1 = load %x, %0 {lane = 1} : f32\n", 2, "load",
     "takes no attribute 'lane'"},
    {"debug_print_of_a_vector", "%0 = load %v, %n {checked} : vector<4 x f32>\ndebug.print %0 {format = \"%f\"}\n", 2,
     "debug.print", "prints scalars; operand 0 is vector<4 x f32>"},
};

std::string verify_error(const Kernel& k, std::string_view stage = "") {
  try {
    verify(k, stage);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "ir.verify") << e.message();
    return e.message();
  }
  return "(verified)";
}

void PrintTo(const RuleCase& c, std::ostream* os) { *os << c.name; }

class Rule : public ::testing::TestWithParam<RuleCase> {};

TEST_P(Rule, MessageNamesKernelOpNumberOpAndRule) {
  const RuleCase& c = GetParam();
  Kernel k = parse(kernel_text(c));
  std::string expected =
      std::string("kernel '") + c.name + "': op #" + std::to_string(c.op_number) + " '" + c.op + "': " + c.rule;
  EXPECT_EQ(verify_error(k), expected);
}

// The number in the message is the one `print` writes with op_numbers: the line carrying it is
// the op the message names.
TEST_P(Rule, OpNumberMatchesThePrintedNumber) {
  const RuleCase& c = GetParam();
  Kernel k = parse(kernel_text(c));
  PrintOptions o;
  o.op_numbers = true;
  std::istringstream lines(print(k, o));
  std::string mark = "// #" + std::to_string(c.op_number);
  bool found = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.size() >= mark.size() && line.compare(line.size() - mark.size(), mark.size(), mark) == 0) {
      found = true;
      // "  %3 = add %1, %2 : f32  // #4" or "  if %2 {  // #5": the op name follows the result.
      std::string text = line.substr(line.find_first_not_of(' '));
      if (text[0] == '%') text = text.substr(text.find(" = ") + 3);
      EXPECT_EQ(text.substr(0, text.find(' ')), c.op) << line;
    }
  }
  EXPECT_TRUE(found) << "no printed op carries " << mark;
}

std::string rule_name(const ::testing::TestParamInfo<RuleCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Verifier, Rule, ::testing::ValuesIn(kRules), rule_name);

TEST(Verifier, StageIsNamedInTheMessage) {
  Kernel k = parse(kernel_text(kRules[0]));
  EXPECT_EQ(verify_error(k, "after fold"), "kernel 'operand_count' (after fold): op #1 'add': takes 2 operands, has 1");
}

// Each rule's kernel is valid once the breaking line is repaired: the case breaks exactly that rule.
TEST(Verifier, RepairedKernelsVerify) {
  Kernel ok = parse(kernel_text({"repaired",
                                 "%0 = cast %f : f32\n%1 = add %f, %0 : f32\nstore %y, %n, %1 {checked}\n"
                                 "%2 = load %v, %n {checked} : vector<4 x f32>\n"
                                 "%3 = vector.extract %2 {lane = 3} : f32\n"
                                 "%4 = cast %2 : vector<4 x i32>\n%5 = bitcast %f : i32\n"
                                 "%6 = const 0 : u32\n%7 = const 1 : u32\n"
                                 "for %6, %n, %7 {unroll = 1, prefetch_stages = 0} (%8: u32) {\n"
                                 "if %b {\nbreak\n}\n}\n"
                                 "while {\ncondition %b\n} do {\ncontinue\n}\n",
                                 0, "", ""}));
  EXPECT_EQ(verify_error(ok), "(verified)");
}

// ---- kernel-level rules (no op) -----------------------------------------------------------------

TEST(Verifier, ParameterOfANonParameterType) {
  Kernel k =
      parse("kernel @p(%s: shared<f32, 4>) {cube_dim = [1, 1, 1], mode = checked, address = u32, vector = 1} {\n}\n");
  EXPECT_EQ(verify_error(k),
            "kernel 'p': parameter 's' has type shared<f32, 4>; parameters are buffers, tensors or scalars");
}

TEST(Verifier, CubeDimWithAZeroExtent) {
  Kernel k = parse("kernel @z() {cube_dim = [4, 0, 1], mode = checked, address = u32, vector = 1} {\n}\n");
  EXPECT_EQ(verify_error(k), "kernel 'z': cube_dim has a zero extent");
}

TEST(Verifier, VectorWidthNotAllowed) {
  Kernel k = parse("kernel @w() {cube_dim = [1, 1, 1], mode = checked, address = u32, vector = 3} {\n}\n");
  EXPECT_EQ(verify_error(k), "kernel 'w': vector width 3 is not one of 1, 2, 4, 8, 16");
}

TEST(Verifier, CubesPerProcessorPastTheLimit) {
  Kernel k = parse(
      "kernel @c() {cube_dim = [1, 1, 1], mode = checked, address = u32, vector = 1, cubes_per_processor = 33} {\n}\n");
  EXPECT_EQ(verify_error(k), "kernel 'c': cubes_per_processor 33 is not 0 (the backend's choice) to 32");
  k.facts.cubes_per_processor = -1;
  EXPECT_EQ(verify_error(k), "kernel 'c': cubes_per_processor -1 is not 0 (the backend's choice) to 32");
  k.facts.cubes_per_processor = 32;
  EXPECT_EQ(verify_error(k), "(verified)");
}

// ---- rules that text cannot break: built by hand ------------------------------------------------

Kernel small_kernel() {
  return parse(
      "kernel @hand(%f: f32, %y: buffer<f32, rw>) {cube_dim = [1, 1, 1], mode = checked, address = u32, vector = 1} {\n"
      "  %0 = add %f, %f : f32\n"
      "  %1 = neg %0 : f32\n"
      "}\n");
}

TEST(VerifierByHand, SmallKernelVerifies) { EXPECT_EQ(verify_error(small_kernel()), "(verified)"); }

TEST(VerifierByHand, UseBeforeDefinition) {
  Kernel k = small_kernel();
  std::swap(k.body.ops[0], k.body.ops[1]);  // neg %0 now comes before the add that defines %0
  EXPECT_EQ(verify_error(k),
            "kernel 'hand': op #1 'neg': operand 0 is not defined here (used outside the region that defines it, or "
            "before)");
}

TEST(VerifierByHand, ParameterWithoutAValue) {
  Kernel k = small_kernel();
  k.params[0].value = 99;
  EXPECT_EQ(verify_error(k), "kernel 'hand': parameter 'f' has no value");
}

TEST(VerifierByHand, ParameterDisagreesWithItsValue) {
  Kernel k = small_kernel();
  k.params[0].type = Type::scalar_of(Scalar::F64);
  EXPECT_EQ(verify_error(k), "kernel 'hand': parameter 'f' disagrees with its value's type");
}

TEST(VerifierByHand, WrongNumberOfRegions) {
  Kernel k = small_kernel();
  Builder b(k);
  Value c = b.const_bool(true);
  b.emit(OpKind::If, {c});
  b.last().regions.resize(1);
  EXPECT_EQ(verify_error(k), "kernel 'hand': op #4 'if': has 1 regions, needs 2");
}

TEST(VerifierByHand, ResultTypeDisagreesWithItsValue) {
  Kernel k = small_kernel();
  k.body.ops[1].type = Type::scalar_of(Scalar::F64);
  EXPECT_EQ(verify_error(k), "kernel 'hand': op #2 'neg': result type disagrees with its value");
}

TEST(VerifierByHand, ResultValueWithoutAType) {
  Kernel k = small_kernel();
  k.body.ops[1].result = 1000;
  EXPECT_EQ(verify_error(k), "kernel 'hand': op #2 'neg': result value 1000 has no type");
}

TEST(VerifierByHand, InductionValueWithoutAType) {
  Kernel k = small_kernel();
  Builder b(k);
  Value lo = b.const_int(Scalar::U32, 0);
  Value step = b.const_int(Scalar::U32, 1);
  b.emit(OpKind::For, {lo, lo, step});
  b.last().regions[0].args.push_back(12345);
  EXPECT_EQ(verify_error(k), "kernel 'hand': op #5 'for': the body takes one induction value of type u32");
}

TEST(VerifierByHand, ConstantWithoutAValue) {
  Kernel k = small_kernel();
  Builder b(k);
  b.const_int(Scalar::U32, 7);
  b.last().attrs.clear();
  EXPECT_EQ(verify_error(k), "kernel 'hand': op #3 'const': needs the attribute 'value'");
}

TEST(VerifierByHand, ConstantValueOfTheWrongKind) {
  Kernel k = small_kernel();
  Builder b(k);
  b.constant(Type::scalar_of(Scalar::F32), AttrValue::of_int(1));  // an integer payload on an f32
  EXPECT_EQ(verify_error(k), "kernel 'hand': op #3 'const': value does not match type f32");
  Kernel k2 = small_kernel();
  Builder b2(k2);
  b2.constant(Type::scalar_of(Scalar::Bool), AttrValue::of_int(1));
  EXPECT_EQ(verify_error(k2), "kernel 'hand': op #3 'const': value does not match type bool");
}

// Every op kind has a rule: none reaches the verifier's fallback, whatever its operands.
TEST(VerifierByHand, NoOpKindFallsThroughToNoRule) {
  for (int i = 0; i < op_kind_count(); ++i) {
    OpKind kind = static_cast<OpKind>(i);
    const OpInfo& info = op_info(kind);
    Kernel k = small_kernel();
    Builder b(k);
    std::vector<Value> operands(static_cast<size_t>(info.min_operands()), k.params[0].value);
    Type result = has_trait(kind, kControl) || has_trait(kind, kTerminator) || kind == OpKind::Store ||
                          kind == OpKind::VarStore || has_trait(kind, kBarrier) || kind == OpKind::DebugPrint
                      ? Type::none()
                      : Type::scalar_of(Scalar::F32);
    b.emit(kind, operands, result);
    std::string message = verify_error(k);
    EXPECT_EQ(message.find("has no verifier rule"), std::string::npos) << op_name(kind) << ": " << message;
  }
}

// A warp-group product reads its factors as rows of one swizzle span, with k in one row, on a cube
// of whole warp groups.
std::string product_error(const std::string& layout, int64_t cube, int64_t k) {
  return verify_error(parse("kernel @p(%x: buffer<f32, rw>) {cube_dim = [" + std::to_string(cube) +
                            ", 1, 1], mode = unchecked, address = u32, vector = 1} layouts {\n  #1 = " + layout +
                            "\n} {\n  %0 = shared.alloc : shared<bf16, 4096, #1>\n  %1 = local.alloc : local<f32, 32>\n"
                            "  %2 = const 0 : u32\n  wgmma.mma_async %0, %2, %0, %2, %1 {shape = [64, 64, " +
                            std::to_string(k) + "]}\n}\n"));
}

TEST(Verifier, WarpGroupProductsReadSwizzledRowsOnWholeWarpGroups) {
  EXPECT_EQ(product_error("shared<pitch = 64, swizzle = 128, align = 1024>", 256, 64), "(verified)");
  EXPECT_EQ(product_error("shared<pitch = 16, swizzle = 32, align = 256>", 128, 16), "(verified)");
  EXPECT_EQ(product_error("shared<pitch = 64, swizzle = 128, align = 1024>", 96, 64),
            "kernel 'p': op #4 'wgmma.mma_async': runs on warp groups of 128 units; the cube has 96");
  EXPECT_EQ(product_error("shared<pitch = 64, swizzle = none, align = 16>", 128, 16),
            "kernel 'p': op #4 'wgmma.mma_async': reads a from a shared array laid out as swizzled rows (a shared "
            "layout with a swizzle of 32, 64 or 128 bytes), not shared<pitch = 64, swizzle = none, align = 16>");
  EXPECT_EQ(product_error("shared<pitch = 128, swizzle = 128, align = 1024>", 128, 16),
            "kernel 'p': op #4 'wgmma.mma_async': reads a as rows of one swizzle span (128 bytes: pitch 64) holding "
            "k = 16; shared<pitch = 128, swizzle = 128, align = 1024> has rows of 256 bytes");
  EXPECT_EQ(product_error("shared<pitch = 32, swizzle = 64, align = 512>", 128, 48),
            "kernel 'p': op #4 'wgmma.mma_async': reads a as rows of one swizzle span (64 bytes: pitch 32) holding "
            "k = 48; shared<pitch = 32, swizzle = 64, align = 512> has rows of 64 bytes");
}

}  // namespace
}  // namespace kiln::ir
