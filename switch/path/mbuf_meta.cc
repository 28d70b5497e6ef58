#include "switch/path/mbuf_meta.h"

#include <rte_errno.h>

namespace sluice {

int g_mbuf_extra_offset = -1;

bool register_mbuf_extra(std::string* error) {
  static const rte_mbuf_dynfield desc = {
      "sluice_mbuf_extra", sizeof(MbufExtra), alignof(MbufExtra), 0};
  g_mbuf_extra_offset = rte_mbuf_dynfield_register(&desc);
  if (g_mbuf_extra_offset < 0) {
    *error = std::string("cannot register the mbuf dynamic field: ") + rte_strerror(rte_errno);
    return false;
  }
  return true;
}

}  // namespace sluice
