#pragma once
// Every model kind, one line each, in display order. A kind's folder under kinds/ defines
// `ModelSpec <kind>_spec()` (its info, options, factory and FLOP count); CMake compiles every
// folder's sources, so adding a model is its folder plus one line here.
//
// NPE_MODEL_KINDS(X) calls X(kind) for each kind (model_registry.cpp declares and lists them).

#define NPE_MODEL_KINDS(X) \
  X(cnp)                   \
  X(rcnp)                  \
  X(tnp)                   \
  X(pttnp)                 \
  X(tetnp)                 \
  X(tepttnp)               \
  X(convcnp)               \
  X(convcnp2d)             \
  X(tnpd)                  \
  X(tnpnd)                 \
  X(tnpa)                  \
  X(tetnpnd)               \
  X(bsatnp)                \
  /* a new kind: one line above this one */
