"""Topology builder, file round trip and validation errors."""

from __future__ import annotations

import ipaddress
import json

import pytest

from topo import spec
from topo.builder import leaf_spine, main


def test_default_fabric_shape_and_addressing():
    t = leaf_spine()
    assert [s.name for s in t.spines()] == ["spine1", "spine2"]
    assert [s.name for s in t.leaves()] == ["leaf1", "leaf2"]
    assert [h.name for h in t.hosts] == ["h1_1", "h1_2", "h2_1", "h2_2"]
    # every leaf: ports 1..2 to its hosts, 3..4 to spine1/spine2; every spine: port L to leaf L
    assert {p: peer for p, (peer, _, _) in t.ports_of("leaf2").items()} == {1: "h2_1", 2: "h2_2", 3: "spine1", 4: "spine2"}
    assert {p: peer for p, (peer, _, _) in t.ports_of("spine2").items()} == {1: "leaf1", 2: "leaf2"}
    h = t.host("h2_1")
    assert (h.ip, h.gateway, h.prefix_len) == ("10.2.1.2", "10.2.1.1", 24)
    assert ipaddress.ip_address(h.ip) in t.leaf_subnet("leaf2")
    assert t.host_port("h2_2") == ("leaf2", 2)
    assert len({s.grpc_port for s in t.switches}) == 4
    assert len({n.mac for n in [*t.switches, *t.hosts]}) == 8


def test_builder_sizes_and_prefix():
    t = leaf_spine(3, 4, 5, prefix="x9", rate_gbps=400, time_dilation=500)
    assert len(t.spines()) == 3 and len(t.leaves()) == 4 and len(t.hosts) == 20
    assert len(t.links) == 20 + 12
    assert all(n.startswith("x9") for n in [*t.switch_names(), *(h.name for h in t.hosts)])
    assert {link.rate_gbps for link in t.links} == {400}
    with pytest.raises(ValueError, match="spines must be an integer"):
        leaf_spine(0, 2, 2)


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_file_round_trip(tmp_path, suffix):
    t = leaf_spine(time_dilation=2000, mtu=1024)
    path = tmp_path / f"fabric{suffix}"
    spec.dump(t, path)
    assert spec.load(path) == t
    if suffix == ".json":
        assert json.loads(path.read_text())["time_dilation"] == 2000


def test_validation_lists_every_problem():
    d = leaf_spine().to_dict()
    d["switches"][0]["role"] = "core"
    d["switches"][1]["device_id"] = d["switches"][2]["device_id"]
    d["hosts"][0]["ip"] = "10.2.9.2"
    d["hosts"][1]["mac"] = "not-a-mac"
    d["links"][1]["b_port"] = 1  # h1_2 onto leaf1 port 1, which h1_1 uses
    d["links"][2]["rate_gbps"] = 0
    with pytest.raises(spec.TopologyError) as err:
        spec.Topology.from_dict(d)
    text = str(err.value)
    for fragment in ("role 'core' is not one of leaf, agg, spine",
                     "device_id 1 of leaf1 is already used by spine2",
                     "ip 10.2.9.2 is outside its leaf's subnet 10.1.0.0/16",
                     "mac 'not-a-mac'",
                     "leaf1 port 1 already used by links[0]",
                     "rate_gbps must be > 0"):
        assert fragment in text, fragment
    assert len(err.value.problems) >= 6


def test_structural_errors(tmp_path):
    with pytest.raises(spec.TopologyError, match="switches: must be a non-empty list"):
        spec.Topology.from_dict({"hosts": [], "links": []})
    d = leaf_spine().to_dict()
    d["links"][0]["colour"] = "red"
    del d["hosts"][0]["mac"]
    with pytest.raises(spec.TopologyError) as err:
        spec.Topology.from_dict(d)
    assert "links[0]: unknown key(s) colour" in str(err.value)
    assert "hosts[0]: missing key(s) mac" in str(err.value)
    bad = tmp_path / "bad.yaml"
    bad.write_text("switches: [unclosed")
    with pytest.raises(spec.TopologyError, match="not valid YAML"):
        spec.load(bad)
    with pytest.raises(spec.TopologyError, match="No such file"):
        spec.load(tmp_path / "missing.yaml")


def test_leaf_without_uplink_and_spine_to_spine_rejected():
    d = leaf_spine(1, 2, 1).to_dict()
    d["links"] = [link for link in d["links"] if not (link["a"] == "leaf2" and link["b"] == "spine1")]
    with pytest.raises(spec.TopologyError, match="leaf leaf2: has no link to any spine"):
        spec.Topology.from_dict(d)
    d = leaf_spine(2, 1, 1).to_dict()
    d["links"].append({"a": "spine1", "a_port": 7, "b": "spine2", "b_port": 7})
    with pytest.raises(spec.TopologyError, match="switch links must join two tiers"):
        spec.Topology.from_dict(d)


def test_builder_command_writes_and_checks(tmp_path, capsys):
    out = tmp_path / "f.json"
    assert main(["--spines", "3", "--leaves", "2", "--hosts-per-leaf", "1", "--time-dilation", "500", "-o", str(out)]) == 0
    t = spec.load(out)
    assert (len(t.spines()), len(t.leaves()), len(t.hosts), t.time_dilation) == (3, 2, 2, 500)
    assert main(["--check", str(out)]) == 0
    assert "3 spines, 2 leaves, 2 hosts, 8 links: valid" in capsys.readouterr().out
    d = json.loads(out.read_text())
    d["hosts"][0]["leaf"] = "spine1"
    out.write_text(json.dumps(d))
    assert main(["--check", str(out)]) == 2
    assert "leaf 'spine1' is not a leaf switch" in capsys.readouterr().err
    assert main(["--spines", "0", "-o", str(out)]) == 2


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_queue_depth_round_trip_and_default(tmp_path, suffix):
    t = leaf_spine()
    assert t.queue_depth_pkts == 128
    t.queue_depth_pkts = 512
    path = tmp_path / f"deep{suffix}"
    spec.dump(t, path)
    back = spec.load(path)
    assert back == t and back.queue_depth_pkts == 512 and "queue_depth_pkts" not in back.extra
    d = t.to_dict()
    del d["queue_depth_pkts"]  # optional: older topology files keep working
    assert spec.Topology.from_dict(d).queue_depth_pkts == 128


@pytest.mark.parametrize("depth", [0, -1, 70000, 12.5, "deep", True])
def test_bad_queue_depth_is_rejected_clearly(depth):
    d = leaf_spine().to_dict()
    d["queue_depth_pkts"] = depth
    with pytest.raises(spec.TopologyError) as err:
        spec.Topology.from_dict(d)
    assert err.value.problems == [f"queue_depth_pkts: must be an integer 1..65535 (packets per switch queue), got {depth!r}"]
