#include "eval/elf_inspect.h"

#include <cxxabi.h>
#include <elf.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>

#include "common/fs.h"

namespace kevolve::eval {
namespace {

// Compiler and C runtime objects every shared library has.
const std::set<std::string> kRuntimeObjects = {
    "__dso_handle", "__TMC_END__", "completed.0", "completed.1", "_GLOBAL_OFFSET_TABLE_", "_DYNAMIC",
    "__FRAME_END__", "__GNU_EH_FRAME_HDR", "__frame_dummy_init_array_entry", "__do_global_dtors_aux_fini_array_entry",
    "__init_array_start", "__init_array_end", "__fini_array_start", "__fini_array_end", "DW.ref.__gxx_personality_v0",
    "__bss_start", "_edata", "_end"};

// "_ZL12cached_input" -> "cached_input"; C names are returned unchanged.
std::string demangle(const std::string& name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !d) return name;
  std::string out(d);
  std::free(d);
  return out;
}

}  // namespace

expected<elf_report> inspect_elf(const std::filesystem::path& so) {
  auto data = read_file(so);
  if (!data) return tl::unexpected(data.error());
  const std::string& b = *data;
  auto bad = [&](const char* why) { return make_error(errc::invalid_input, so.string() + ": not a usable ELF64 library: " + why); };
  if (b.size() < sizeof(Elf64_Ehdr) || std::memcmp(b.data(), ELFMAG, SELFMAG) != 0) return bad("bad magic");
  Elf64_Ehdr eh;
  std::memcpy(&eh, b.data(), sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) return bad("not 64-bit");
  if (eh.e_shoff == 0 || eh.e_shoff + size_t(eh.e_shnum) * sizeof(Elf64_Shdr) > b.size()) return bad("no section table");
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  std::memcpy(sh.data(), b.data() + eh.e_shoff, sh.size() * sizeof(Elf64_Shdr));
  auto section_ok = [&](const Elf64_Shdr& s) { return s.sh_type == SHT_NOBITS || s.sh_offset + s.sh_size <= b.size(); };
  for (const auto& s : sh)
    if (!section_ok(s)) return bad("section out of range");
  const Elf64_Shdr& shstr = sh.at(eh.e_shstrndx);
  auto sec_name = [&](const Elf64_Shdr& s) { return std::string(b.data() + shstr.sh_offset + s.sh_name); };

  elf_report r;
  auto read_symbols = [&](const Elf64_Shdr& symtab, bool dynamic) {
    if (symtab.sh_link >= sh.size() || symtab.sh_entsize != sizeof(Elf64_Sym)) return;
    const Elf64_Shdr& strtab = sh[symtab.sh_link];
    const size_t count = symtab.sh_size / sizeof(Elf64_Sym);
    for (size_t i = 1; i < count; ++i) {
      Elf64_Sym sym;
      std::memcpy(&sym, b.data() + symtab.sh_offset + i * sizeof(Elf64_Sym), sizeof sym);
      if (sym.st_name >= strtab.sh_size) continue;
      const std::string name(b.data() + strtab.sh_offset + sym.st_name);
      const int bind = ELF64_ST_BIND(sym.st_info), type = ELF64_ST_TYPE(sym.st_info);
      if (dynamic) {
        if (sym.st_shndx == SHN_UNDEF) {
          if (!name.empty()) r.imports.push_back(name);
        } else if ((bind == STB_GLOBAL || bind == STB_WEAK || bind == STB_GNU_UNIQUE) &&
                   ELF64_ST_VISIBILITY(sym.st_other) == STV_DEFAULT) {
          r.exports.push_back(name);
        }
        continue;
      }
      if ((type != STT_OBJECT && type != STT_TLS) || sym.st_shndx == SHN_UNDEF || sym.st_shndx >= sh.size()) continue;
      const Elf64_Shdr& home = sh[sym.st_shndx];
      const bool writable = (home.sh_flags & SHF_WRITE) != 0;
      const bool tls = type == STT_TLS || (home.sh_flags & SHF_TLS) != 0;
      const std::string home_name = sec_name(home);
      // .data.rel.ro and friends hold relocated constants (vtables, typeinfo).
      const bool relro = home_name.rfind(".data.rel.ro", 0) == 0 || home_name == ".init_array" ||
                         home_name == ".fini_array" || home_name == ".got" || home_name == ".got.plt" ||
                         home_name == ".dynamic" || home_name == ".eh_frame";
      if ((writable && !relro) || tls) {
        if (!kRuntimeObjects.count(name)) r.mutable_statics.push_back(demangle(name) + " (" + home_name + ")");
      }
    }
  };
  for (const auto& s : sh) {
    const std::string name = sec_name(s);
    if (s.sh_type == SHT_DYNSYM) read_symbols(s, true);
    if (s.sh_type == SHT_SYMTAB) read_symbols(s, false);
    if (name == ".text") r.code_bytes = s.sh_size;
    if (s.sh_type == SHT_INIT_ARRAY) r.init_functions = s.sh_size / 8;
    if (s.sh_type == SHT_DYNAMIC && s.sh_link < sh.size()) {
      const Elf64_Shdr& strtab = sh[s.sh_link];
      for (size_t off = 0; off + sizeof(Elf64_Dyn) <= s.sh_size; off += sizeof(Elf64_Dyn)) {
        Elf64_Dyn d;
        std::memcpy(&d, b.data() + s.sh_offset + off, sizeof d);
        if (d.d_tag == DT_NULL) break;
        if (d.d_tag == DT_NEEDED && d.d_un.d_val < strtab.sh_size) r.needed.emplace_back(b.data() + strtab.sh_offset + d.d_un.d_val);
      }
    }
  }
  std::sort(r.imports.begin(), r.imports.end());
  r.imports.erase(std::unique(r.imports.begin(), r.imports.end()), r.imports.end());
  return r;
}

}  // namespace kevolve::eval
