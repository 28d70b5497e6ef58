#include "lib/emulator/hosts/flow_list.h"

#include <charconv>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include "lib/net/mac_addr.h"

namespace sluice {
namespace {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> fields;
  std::string cur;
  for (char c : line) {
    if (c == ',') {
      fields.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur.push_back(c);
    }
  }
  fields.push_back(cur);
  return fields;
}

bool parse_u64(const std::string& s, uint64_t* v) {
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// Seconds with at most nine decimals, exactly, in ns.
bool parse_seconds_ns(const std::string& s, uint64_t* ns) {
  const size_t dot = s.find('.');
  uint64_t whole = 0, frac = 0;
  const std::string w = s.substr(0, dot);
  if (!parse_u64(w, &whole) || whole > 1'000'000) return false;
  if (dot != std::string::npos) {
    std::string f = s.substr(dot + 1);
    if (f.empty() || f.size() > 9) return false;
    f.append(9 - f.size(), '0');
    if (!parse_u64(f, &frac)) return false;
  }
  *ns = whole * 1'000'000'000ull + frac;
  return true;
}

}  // namespace

bool parse_flow_list(const std::string& text, const std::string& name,
                     std::vector<FlowListEntry>* out, std::string* error) {
  std::istringstream in(text);
  std::string line;
  uint32_t lineno = 0;
  int c_id = -1, c_src = -1, c_dst = -1, c_size = -1, c_start = -1, c_incast = -1;
  size_t columns = 0;
  std::unordered_set<uint32_t> ids;
  out->clear();
  auto fail = [&](const std::string& why) {
    *error = name + ":" + std::to_string(lineno) + ": " + why;
    return false;
  };
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line == "\r") continue;
    const std::vector<std::string> f = split_csv(line);
    if (c_id < 0 && columns == 0) {
      columns = f.size();
      for (size_t i = 0; i < f.size(); ++i) {
        const std::string& h = f[i];
        const int idx = static_cast<int>(i);
        if (h == "flow_id") c_id = idx;
        if (h == "src_ip") c_src = idx;
        if (h == "dst_ip") c_dst = idx;
        if (h == "size") c_size = idx;
        if (h == "arrival_time") c_start = idx;
        if (h == "is_incast") c_incast = idx;
      }
      if (c_id < 0 || c_src < 0 || c_dst < 0 || c_size < 0 || c_start < 0)
        return fail(
            "the header line must name the columns flow_id, src_ip, dst_ip, size and "
            "arrival_time (a flows.csv from tools/workload)");
      continue;
    }
    if (f.size() != columns)
      return fail("expected " + std::to_string(columns) + " columns, found " +
                  std::to_string(f.size()));
    FlowListEntry e;
    e.line = lineno;
    uint64_t id;
    if (!parse_u64(f[c_id], &id) || id > UINT32_MAX) return fail("bad flow_id '" + f[c_id] + "'");
    e.id = static_cast<uint32_t>(id);
    if (!parse_ipv4(f[c_src], &e.src_ip)) return fail("bad src_ip '" + f[c_src] + "'");
    if (!parse_ipv4(f[c_dst], &e.dst_ip)) return fail("bad dst_ip '" + f[c_dst] + "'");
    if (e.src_ip == e.dst_ip) return fail("flow " + f[c_id] + " goes from a host to itself");
    if (!parse_u64(f[c_size], &e.bytes)) return fail("bad size '" + f[c_size] + "'");
    if (e.bytes == 0) return fail("flow " + f[c_id] + " has size 0");
    if (e.bytes > kMaxFlowBytes)
      return fail("flow " + f[c_id] + " has " + f[c_size] +
                  " bytes, more than the transports' 32-bit sequence space (" +
                  std::to_string(kMaxFlowBytes) + ")");
    if (!parse_seconds_ns(f[c_start], &e.start_ns))
      return fail("bad arrival_time '" + f[c_start] +
                  "' (seconds, at most nine decimals, below 10^6)");
    e.incast = c_incast >= 0 && (f[c_incast] == "1" || f[c_incast] == "true");
    if (!ids.insert(e.id).second) return fail("flow id " + f[c_id] + " appears twice");
    out->push_back(e);
  }
  if (columns == 0) {
    lineno = 0;
    return fail("empty flow list");
  }
  return true;
}

bool read_flow_list(const std::string& path, std::vector<FlowListEntry>* out, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot open flow list " + path;
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_flow_list(ss.str(), path, out, error);
}

}  // namespace sluice
