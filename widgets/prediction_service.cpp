#include "prediction_service.h"

#include <chrono>
#include <cmath>
#include <functional>

#include <torch/torch.h>

#include "npe/errors.h"
#include "npe/gp.h"

namespace npe::widgets {
namespace {

torch::Tensor column(const std::vector<double>& values) {
  return torch::tensor(values, torch::kFloat64)
      .to(torch::kFloat32)
      .view({1, static_cast<int64_t>(values.size()), 1});
}

std::vector<double> to_vector(const torch::Tensor& t) {
  auto flat = t.reshape({-1}).to(torch::kCPU, torch::kFloat64).contiguous();
  return {flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel()};
}

using Conditioned = std::function<Prediction(const torch::Tensor& xq)>;

// Conditions a model on a context once and returns a predictor for any query points; for the
// fitted GP this fits the hyperparameters once per context.
Conditioned condition(const ModelEntry& entry, const PredictionRequest& request,
                      const torch::Tensor& xc, const torch::Tensor& yc) {
  switch (entry.kind) {
    case ModelEntry::Kind::Neural: {
      // The model may live on a GPU; its inputs go there and its outputs come back.
      const auto device = entry.model->parameters().front().device();
      return [&entry, device, xc = xc.to(device), yc = yc.to(device)](const torch::Tensor& xq) {
        entry.model->eval();
        auto p = entry.model->predict({xc, yc, xq.to(device), {}});
        return Prediction{p.mean.cpu(), p.stddev.cpu()};
      };
    }
    case ModelEntry::Kind::GpOracle: {
      if (!request.truth_kernel) {
        throw InvalidInputError("needs a ground-truth kernel (not available in free-hand mode)");
      }
      const auto kernel = *request.truth_kernel;
      const double noise = request.truth_noise_std;
      return [kernel, noise, xc, yc](const torch::Tensor& xq) {
        auto p = gp_posterior_predictive(kernel, noise, xc[0], yc[0], xq[0]);
        return Prediction{p.mean.unsqueeze(0), p.stddev.unsqueeze(0)};
      };
    }
    case ModelEntry::Kind::GpFitted: {
      FittedGpOptions options;
      options.iterations =
          request.refine ? request.refined_fit_iterations : request.interactive_fit_iterations;
      auto fitted = fit_gp({xc, yc, xc, {}}, options);
      const auto kernel = fitted.kernels[0];
      const double noise = fitted.noise_std[0];
      return [kernel, noise, xc, yc](const torch::Tensor& xq) {
        auto p = gp_posterior_predictive(kernel, noise, xc[0], yc[0], xq[0]);
        return Prediction{p.mean.unsqueeze(0), p.stddev.unsqueeze(0)};
      };
    }
  }
  throw InvalidInputError("unknown model kind");
}

void require_finite(const Prediction& p) {
  if (!torch::isfinite(p.mean).all().item<bool>() ||
      !torch::isfinite(p.stddev).all().item<bool>()) {
    throw InvalidInputError("produced non-finite values for this input");
  }
}

}  // namespace

PredictionResult compute_predictions(const PredictionRequest& request) {
  torch::NoGradGuard no_grad;
  PredictionResult result;
  result.serial = request.serial;
  result.refine = request.refine;
  result.xt = request.xt;
  auto xc = column(request.xc), yc = column(request.yc), xt = column(request.xt);
  for (const auto& entry : request.models) {
    ModelPrediction out;
    out.id = entry.id;
    try {
      const auto start = std::chrono::steady_clock::now();
      auto predictor = condition(entry, request, xc, yc);
      auto p = predictor(xt);
      require_finite(p);
      out.milliseconds =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      out.mean = to_vector(p.mean);
      out.stddev = to_vector(p.stddev);
      if (!request.held_out_x.empty()) {
        auto held = predictor(column(request.held_out_x));
        out.held_out_ll = log_likelihood_per_task(held, column(request.held_out_y)).item<double>();
      }
      if (request.refine) {
        // Predict the unshifted data and compare with the prediction for the shifted data
        // (at shifted query points): zero for an exactly translation-equivariant model.
        auto base = condition(entry, request, xc - request.shift, yc)(xt - request.shift);
        out.equivariance_error = std::max((base.mean - p.mean).abs().max().item<double>(),
                                          (base.stddev - p.stddev).abs().max().item<double>());
      }
    } catch (const std::exception& e) {
      out.error = QString::fromUtf8(e.what());
      out.mean.clear();
      out.stddev.clear();
    }
    result.models.push_back(std::move(out));
  }
  return result;
}

AttentionResult compute_attention(const AttentionRequest& request) {
  torch::NoGradGuard no_grad;
  AttentionResult result;
  result.serial = request.serial;
  result.x = request.x;
  if (!request.model.model || request.xc.empty()) return result;
  const auto device = request.model.model->parameters().front().device();
  Task task = Task{column(request.xc), column(request.yc), column({request.x}), {}}.to(device);
  auto weights = request.model.model->target_attention(task);
  if (!weights.defined()) return result;
  auto w = weights[0][0].cpu();
  result.weights = to_vector(w / w.sum());
  result.mean = request.model.model->predict(task).mean.cpu().item<double>();
  return result;
}

PredictionService::PredictionService(QObject* parent) : QObject(parent) {
  m_worker = new QObject;
  m_worker->moveToThread(&m_thread);
  connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
  m_thread.setObjectName("npe-predictions");
  m_thread.start();
}

PredictionService::~PredictionService() {
  m_thread.quit();
  m_thread.wait();
}

void PredictionService::request(PredictionRequest request) {
  m_pending = std::move(request);
  dispatch();
}

void PredictionService::request_attention(AttentionRequest request) {
  m_pending_attention = std::move(request);
  dispatch();
}

void PredictionService::dispatch() {
  if (m_busy) return;
  if (m_pending) {
    auto request = std::move(*m_pending);
    m_pending.reset();
    m_busy = true;
    QMetaObject::invokeMethod(m_worker, [this, request = std::move(request)] {
      auto result = compute_predictions(request);
      QMetaObject::invokeMethod(this, [this, result = std::move(result)] {
        m_busy = false;
        Q_EMIT predictionsReady(result);
        dispatch();
      });
    });
    return;
  }
  if (m_pending_attention) {
    auto request = std::move(*m_pending_attention);
    m_pending_attention.reset();
    m_busy = true;
    QMetaObject::invokeMethod(m_worker, [this, request = std::move(request)] {
      AttentionResult result;
      try {
        result = compute_attention(request);
      } catch (const std::exception&) {
        result.serial = request.serial;  // no weights: the overlay is simply cleared
      }
      QMetaObject::invokeMethod(this, [this, result = std::move(result)] {
        m_busy = false;
        Q_EMIT attentionReady(result);
        dispatch();
      });
    });
  }
}

}  // namespace npe::widgets
