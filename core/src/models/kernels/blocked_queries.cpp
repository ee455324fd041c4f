#include "blocked_queries.h"

#include <algorithm>

#include <torch/torch.h>

namespace npe {
namespace {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The inputs' places in the flat list the autograd function takes.
enum Input : size_t { kQ, kXq, kK, kV, kXk, kParameters };

// What the backward pass needs besides tensors; held by the autograd context as a capsule.
struct BlockPlan : torch::CustomClassHolder {
  QueryBlockFunction block;
  std::vector<QueryBlock> blocks;
};

Tensor query_rows(const Tensor& t, const QueryBlock& b) {
  return t.slice(0, b.batch_begin, b.batch_end).slice(1, b.query_begin, b.query_end);
}

Tensor batch_range(const Tensor& t, const QueryBlock& b) {
  return t.slice(0, b.batch_begin, b.batch_end);
}

class BlockedQueries : public torch::autograd::Function<BlockedQueries> {
 public:
  static variable_list forward(AutogradContext* ctx, at::TensorList inputs,
                               c10::intrusive_ptr<BlockPlan> plan) {
    const auto& q = inputs[kQ];
    std::vector<Tensor> outputs;
    for (const auto& b : plan->blocks) {
      const auto parts =
          plan->block(query_rows(q, b), query_rows(inputs[kXq], b), batch_range(inputs[kK], b),
                      batch_range(inputs[kV], b), batch_range(inputs[kXk], b));
      if (outputs.empty()) {
        for (const auto& part : parts) {
          auto shape = part.sizes().vec();
          shape[0] = q.size(0);
          shape[1] = q.size(1);
          outputs.push_back(torch::empty(shape, part.options()));
        }
      }
      for (size_t i = 0; i < parts.size(); ++i) query_rows(outputs[i], b).copy_(parts[i]);
    }
    ctx->save_for_backward(inputs.vec());
    ctx->saved_data["plan"] = c10::IValue::make_capsule(plan);
    return outputs;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    auto* plan = static_cast<BlockPlan*>(ctx->saved_data["plan"].toCapsule().get());
    // Gradients of whole inputs, filled block by block: the query side's rows are disjoint
    // between blocks, the key side and the parameters are summed over them.
    std::vector<Tensor> result(saved.size());
    for (size_t i = 0; i < saved.size(); ++i) {
      if (saved[i].requires_grad()) result[i] = torch::zeros_like(saved[i]);
    }
    torch::AutoGradMode with_gradients(true);
    for (const auto& b : plan->blocks) {
      // The block's own leaves, so that its gradients come out by themselves.
      auto leaf = [](const Tensor& t) { return t.detach().requires_grad_(t.requires_grad()); };
      std::vector<Tensor> inputs = {leaf(query_rows(saved[kQ], b)), leaf(query_rows(saved[kXq], b)),
                                    leaf(batch_range(saved[kK], b)),
                                    leaf(batch_range(saved[kV], b)),
                                    leaf(batch_range(saved[kXk], b))};
      const auto outputs =
          plan->block(inputs[kQ], inputs[kXq], inputs[kK], inputs[kV], inputs[kXk]);
      std::vector<Tensor> differentiated, grad_outputs;
      for (size_t i = 0; i < outputs.size(); ++i) {
        if (!grads[i].defined() || !outputs[i].requires_grad()) continue;
        differentiated.push_back(outputs[i]);
        grad_outputs.push_back(query_rows(grads[i], b));
      }
      if (differentiated.empty()) continue;
      // Parameters are differentiated as they are: the block function reads them, not copies.
      std::vector<Tensor> wrt;
      std::vector<size_t> places;
      for (size_t i = 0; i < saved.size(); ++i) {
        if (!saved[i].requires_grad()) continue;
        wrt.push_back(i < kParameters ? inputs[i] : saved[i]);
        places.push_back(i);
      }
      const auto block_grads =
          torch::autograd::grad(differentiated, wrt, grad_outputs, /*retain_graph=*/false,
                                /*create_graph=*/false, /*allow_unused=*/true);
      for (size_t j = 0; j < places.size(); ++j) {
        if (!block_grads[j].defined()) continue;
        const auto i = places[j];
        auto target = i == kQ || i == kXq ? query_rows(result[i], b)
                      : i < kParameters   ? batch_range(result[i], b)
                                          : result[i];
        target.add_(block_grads[j]);
      }
    }
    result.emplace_back();  // the plan
    return result;
  }
};

}  // namespace

std::vector<QueryBlock> plan_query_blocks(int64_t batch, int64_t queries, int64_t bytes_per_row,
                                          int64_t budget_bytes) {
  const int64_t rows = std::max<int64_t>(1, budget_bytes / std::max<int64_t>(1, bytes_per_row));
  std::vector<QueryBlock> blocks;
  if (queries == 0) return blocks;
  if (rows >= queries) {
    const int64_t elements = rows / queries;
    for (int64_t b = 0; b < batch; b += elements) {
      blocks.push_back({b, std::min(batch, b + elements), 0, queries});
    }
    return blocks;
  }
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t q = 0; q < queries; q += rows) {
      blocks.push_back({b, b + 1, q, std::min(queries, q + rows)});
    }
  }
  return blocks;
}

std::vector<torch::Tensor> blocked_over_queries(QueryBlockFunction block,
                                                std::vector<QueryBlock> blocks,
                                                const torch::Tensor& q, const torch::Tensor& xq,
                                                const torch::Tensor& k, const torch::Tensor& v,
                                                const torch::Tensor& xk,
                                                const std::vector<torch::Tensor>& parameters) {
  TORCH_CHECK(!blocks.empty(), "blocked_over_queries: no blocks (no queries or no batch)");
  std::vector<Tensor> inputs = {q, xq, k, v, xk};
  inputs.insert(inputs.end(), parameters.begin(), parameters.end());
  auto plan = c10::make_intrusive<BlockPlan>();
  plan->block = std::move(block);
  plan->blocks = std::move(blocks);
  return BlockedQueries::apply(at::TensorList(inputs), plan);
}

}  // namespace npe
