#pragma once
// Project exception hierarchy: every error that core/ reports to a user derives from npe::Error,
// so the CLI and the GUI can catch one type and show its message.

#include <stdexcept>
#include <string>

namespace npe {

/// Base of all errors that core/ reports with a user-facing message.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Tensors of the wrong shape, non-finite values, empty inputs where data is required.
class InvalidInputError : public Error {
 public:
  using Error::Error;
};

/// Unknown model kind, bad option value, inconsistent configuration.
class ConfigError : public Error {
 public:
  using Error::Error;
};

/// A checkpoint that is missing, corrupt, truncated or does not match what was asked for.
class CheckpointError : public Error {
 public:
  using Error::Error;
};

/// Data files (datasets, sessions) that cannot be read.
class DataError : public Error {
 public:
  using Error::Error;
};

/// A model that broke its contract while predicting: a TorchScript program (a user's own code)
/// that threw inside forward() or returned the wrong shapes, non-finite values or a standard
/// deviation that is not positive.
class ModelError : public Error {
 public:
  using Error::Error;
};

/// The input would need more memory or grid points than allowed.
class ResourceLimitError : public Error {
 public:
  using Error::Error;
};

}  // namespace npe
