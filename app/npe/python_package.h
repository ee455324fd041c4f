#pragma once
// The Python package of `npe export-pytorch` (python/npe_models), built into npe so that an
// export needs nothing beside the program: (path inside npe_models/, contents) of each file.

#include <string>
#include <utility>
#include <vector>

namespace npe::cli {

const std::vector<std::pair<std::string, std::string>>& python_package_files();

}  // namespace npe::cli
