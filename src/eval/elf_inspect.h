// Reads a compiled kernel library (ELF64) to check what it exports, what it
// imports, whether it keeps mutable static data and whether it runs code when
// loaded. Uses <elf.h> only.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/error.h"

namespace kevolve::eval {

struct elf_report {
  std::vector<std::string> exports;         // defined global dynamic symbols
  std::vector<std::string> imports;         // undefined dynamic symbols
  std::vector<std::string> needed;          // DT_NEEDED libraries
  std::vector<std::string> mutable_statics; // objects in writable or TLS sections
  size_t code_bytes = 0;                    // size of .text
  size_t init_functions = 0;                // entries of .init_array
};

expected<elf_report> inspect_elf(const std::filesystem::path& so);

}  // namespace kevolve::eval
