#include "spec/front_matter.h"

#include "spec/yaml_reader.h"

namespace kevolve::spec {

expected<front_matter> parse_front_matter(const std::string& text, const std::string& file) {
  if (text.rfind("---\n", 0) != 0)
    return make_error(errc::invalid_input, file + ":1: expected YAML front matter starting with a '---' line");
  const size_t end = text.find("\n---", 3);
  if (end == std::string::npos)
    return make_error(errc::invalid_input, file + ":1: the front matter has no closing '---' line");
  const std::string yaml = text.substr(4, end - 3);
  front_matter out;
  size_t body = text.find('\n', end + 4);
  body = body == std::string::npos ? text.size() : body + 1;
  out.body = text.substr(body);
  out.body_line = 1;
  for (size_t i = 0; i < body && i < text.size(); ++i) out.body_line += text[i] == '\n';
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    return make_error(errc::invalid_input, file + ":" + std::to_string(e.mark.line + 2) + ": invalid front matter: " + e.msg);
  }
  if (!root.IsMap()) return make_error(errc::invalid_input, file + ":2: the front matter must be a map of keys");
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    const int line = yaml_reader::line_of(kv.second) + 1;
    auto& values = out.fields[key];
    if (kv.second.IsScalar()) {
      values.push_back(kv.second.Scalar());
    } else if (kv.second.IsSequence()) {
      for (const auto& v : kv.second) {
        if (!v.IsScalar())
          return make_error(errc::invalid_input, file + ":" + std::to_string(line) + ": '" + key + "' must be a list of strings");
        values.push_back(v.Scalar());
      }
    } else if (!kv.second.IsNull()) {
      return make_error(errc::invalid_input, file + ":" + std::to_string(line) + ": '" + key + "' must be a string or a list of strings");
    }
  }
  return out;
}

}  // namespace kevolve::spec
