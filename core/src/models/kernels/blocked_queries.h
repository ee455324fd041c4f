#pragma once
// TE attention's pairwise part in blocks of query rows, recomputed in the backward pass.
//
// The pairwise MLP of TE attention (TE-TNP paper, Section 3) forms a [rows, Nk, width] tensor
// for every query row; done for all queries at once and kept for the backward pass, a
// paper-size TE-PT-TNP on 56 x 56 images at batch 32 holds tens of GB of them. Here the queries
// are taken a block at a time, so that only one block's pair tensors live at once, and nothing
// inside a block is kept: the backward pass computes each block again with gradients on and
// differentiates it alone (activation checkpointing per block, as torch.utils.checkpoint does for
// a whole module). Queries do not interact, so the result is the unblocked one up to the order
// of float sums. Only libtorch operations (or a CPU kernel the block function picks itself):
// it runs on every device.

#include <functional>
#include <vector>

#include <torch/types.h>

namespace npe {

/// Batch elements [batch_begin, batch_end) and their query rows [query_begin, query_end).
/// A block is either whole batch elements or part of the queries of one.
struct QueryBlock {
  int64_t batch_begin, batch_end, query_begin, query_end;
};

/// Blocks covering `batch` x `queries` rows, each taking at most `budget_bytes` at
/// `bytes_per_row` (at least one row per block, however large a row is).
std::vector<QueryBlock> plan_query_blocks(int64_t batch, int64_t queries, int64_t bytes_per_row,
                                          int64_t budget_bytes);

/// One block: (q [b,rows,...], xq [b,rows,Dx], k, v, xk [b,...] for the block's batch range)
/// -> outputs, each [b, rows, ...].
using QueryBlockFunction = std::function<std::vector<torch::Tensor>(
    const torch::Tensor& q, const torch::Tensor& xq, const torch::Tensor& k, const torch::Tensor& v,
    const torch::Tensor& xk)>;

/// `block` applied to every block of `blocks` and its outputs put together ([B, Nq, ...] each).
/// q and xq have the batch first and the query rows second; k, v and xk the batch first.
/// Differentiable with respect to q, xq, k, v, xk and `parameters` (every other tensor the
/// block function reads that may need a gradient, e.g. its module's parameters).
std::vector<torch::Tensor> blocked_over_queries(QueryBlockFunction block,
                                                std::vector<QueryBlock> blocks,
                                                const torch::Tensor& q, const torch::Tensor& xq,
                                                const torch::Tensor& k, const torch::Tensor& v,
                                                const torch::Tensor& xk,
                                                const std::vector<torch::Tensor>& parameters);

}  // namespace npe
