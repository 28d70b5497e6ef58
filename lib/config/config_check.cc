#include "lib/config/config_check.h"

namespace sluice {

std::string item_key(const std::string& parent, const char* list, size_t i) {
  return parent + (parent.empty() ? "" : ".") + list + "[" + std::to_string(i) + "]";
}

void ConfigCheck::error(const std::string& key, std::string message) {
  errors_->push_back(ConfigError{c_.file, line_for(lines_, key), key, std::move(message)});
}

void ConfigCheck::note(const std::string& key, std::string message) {
  if (notes_ == nullptr) return;
  notes_->push_back(ConfigError{c_.file, line_for(lines_, key), key, std::move(message)});
}

bool ConfigCheck::has_error(const std::string& key) const {
  for (const ConfigError& e : *errors_) {
    if (e.file == c_.file && e.key == key) return true;
  }
  return false;
}

bool ConfigCheck::has_error_at_or_in(const std::string& key) const {
  for (const ConfigError& e : *errors_) {
    if (e.file == c_.file && e.key.compare(0, key.size(), key) == 0 &&
        (e.key.size() == key.size() || e.key[key.size()] == '.'))
      return true;
  }
  return false;
}

bool ConfigCheck::has_error_under(const std::string& key) const {
  for (const ConfigError& e : *errors_) {
    if (e.file == c_.file && e.key.compare(0, key.size(), key) == 0 &&
        (e.key.size() == key.size() || e.key[key.size()] == '[')) {
      return true;
    }
  }
  return false;
}

bool ConfigCheck::add_switch(const std::string& name, size_t s) {
  return switch_index_.emplace(name, s).second;
}

bool ConfigCheck::add_port(size_t s, const std::string& name, size_t p) {
  return port_index_[s].emplace(name, p).second;
}

std::optional<std::pair<size_t, size_t>> ConfigCheck::find_port(const std::string& sw,
                                                                const std::string& port) const {
  const auto s = switch_index_.find(sw);
  if (s == switch_index_.end()) return std::nullopt;
  const auto ports = port_index_.find(s->second);
  if (ports == port_index_.end()) return std::nullopt;
  const auto p = ports->second.find(port);
  if (p == ports->second.end()) return std::nullopt;
  return std::make_pair(s->second, p->second);
}

}  // namespace sluice
