"""Host lists: name -> IPv4 address, host MAC, gateway MAC (the MAC of the
switch port the host is attached to, i.e. the destination MAC of its frames).

YAML (.yaml / .yml):
    hosts:
      - {name: h0, ip: 10.0.0.2, mac: "02:00:00:00:00:10", gateway_mac: "02:00:00:00:01:00"}
Text (anything else): one host per line, '#' comments:
    h0 10.0.0.2 02:00:00:00:00:10 02:00:00:00:01:00
A host's index in the file is its sender id.
"""

from dataclasses import dataclass

from . import payload


@dataclass(frozen=True)
class Host:
    name: str
    ip: str
    mac: str
    gateway_mac: str
    index: int


def _check(hosts, path):
    if len(hosts) < 2:
        raise ValueError("%s: need at least two hosts" % path)
    names = [h.name for h in hosts]
    if len(set(names)) != len(names):
        raise ValueError("%s: duplicate host names" % path)
    for h in hosts:
        payload.ip_bytes(h.ip)
        payload.mac_bytes(h.mac)
        payload.mac_bytes(h.gateway_mac)
    return hosts


def load_hosts(path):
    if path.endswith((".yaml", ".yml")):
        import yaml
        with open(path) as f:
            doc = yaml.safe_load(f)
        entries = doc.get("hosts") if isinstance(doc, dict) else None
        if not isinstance(entries, list):
            raise ValueError("%s: expected a 'hosts:' list" % path)
        hosts = []
        for i, e in enumerate(entries):
            try:
                hosts.append(Host(str(e["name"]), str(e["ip"]), str(e["mac"]),
                                  str(e["gateway_mac"]), i))
            except (KeyError, TypeError):
                raise ValueError("%s: host %d needs name, ip, mac, gateway_mac" % (path, i + 1))
        return _check(hosts, path)
    hosts = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            fields = line.split("#", 1)[0].split()
            if not fields:
                continue
            if len(fields) != 4:
                raise ValueError("%s:%d: expected 'name ip mac gateway_mac'" % (path, lineno))
            hosts.append(Host(fields[0], fields[1], fields[2], fields[3], len(hosts)))
    return _check(hosts, path)


def hosts_from_config(path):
    """Hosts of a sluice configuration: every `role: host` port that has a
    `peer_ip` is a host with that address, MAC `peer_mac` and gateway MAC the
    port's `mac` (both must be given). The host is named after the port, or
    `<switch>-<port>` when port names repeat across switches."""
    import yaml
    with open(path) as f:
        doc = yaml.safe_load(f) or {}
    found = []
    for sw in doc.get("switches") or []:
        for port in sw.get("ports") or []:
            if port.get("role") != "host" or "peer_ip" not in port:
                continue
            where = "%s/%s" % (sw.get("name"), port.get("name"))
            if "peer_mac" not in port or "mac" not in port:
                raise ValueError("%s: host port %s needs mac and peer_mac" % (path, where))
            found.append((str(sw.get("name")), str(port.get("name")), str(port["peer_ip"]),
                          str(port["peer_mac"]), str(port["mac"])))
    names = [p for _, p, _, _, _ in found]
    unique = len(set(names)) == len(names)
    hosts = [Host(p if unique else "%s-%s" % (s, p), ip, mac, gw, i)
             for i, (s, p, ip, mac, gw) in enumerate(found)]
    return _check(hosts, path)
