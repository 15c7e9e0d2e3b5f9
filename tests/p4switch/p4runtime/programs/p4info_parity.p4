/* P4Info corner cases where our generator once differed from p4c (p4switch/p4info/compare.py
 * found them on p4c's corpus); tests/p4switch/p4runtime/test_p4rt_p4info_parity.py checks what p4c
 * makes of each. Written for these tests, not taken from p4c. */
#include <core.p4>
#include <v1model.p4>

@p4runtime_translation("example.org/fabric/port_id_t", 32)
@brief_note("a translated port")
type bit<9> port_id_t;
type bit<16> vrf_t;
type vrf_t vrf2_t;                 /* a new type of a new type */
enum bit<8> Kind { DATA = 1, ACK = 17 }

header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
header tag_t { bit<8> a; }
header tag2_t { bit<16> b; }
header_union tags_t { tag_t t1; tag2_t t2; }
struct meta_t {
    @name("vrf_id") vrf2_t vrf;    /* a key on it is named by the field's @name */
    Kind kind;
    port_id_t port;
}
struct cpu_meta_t { bit<7> pad; bit<9> port; }
@controller_header("packet_out")
header packet_out_t { cpu_meta_t meta; }    /* described flattened: meta.pad, meta.port */
struct headers_t { packet_out_t packet_out; eth_t eth; tags_t tags; eth_t[2] stack; }

parser Sub(packet_in pkt, out eth_t eth) {
    value_set<bit<16>>(4) special_types;
    state start {
        pkt.extract(eth);
        transition select(eth.etype) { special_types: accept; default: accept; }
    }
}
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Sub() first;
    state start { first.apply(pkt, hdr.eth); transition accept; }
}
control V(inout headers_t hdr, inout meta_t meta) { apply { } }

/* applied by its type name from Ing: p4c instantiates it as Ing.Acl */
control Acl(inout headers_t hdr, inout meta_t meta) {
    action deny() { meta.kind = Kind.ACK; }
    table acl { key = { hdr.eth.etype: exact; } actions = { deny; } }
    apply { acl.apply(); }
}

control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_port(port_id_t port) { meta.port = port; }
    action inner(bit<8> x) { hdr.tags.t1.a = x; }      /* only called from outer: inlined */
    action outer() { inner(3); }
    action bump(bit<16> step) { hdr.eth.etype = hdr.eth.etype + step; }  /* called directly */
    action flag() { meta.kind = Kind.DATA; }
    action never() { meta.kind = Kind.ACK; }              /* only in a branch never taken */
    action late() { meta.kind = Kind.ACK; }               /* only after exit: still listed */

    /* no default_action: p4c adds NoAction, @defaultonly, and makes it the default */
    table by_key {
        key = {
            hdr.eth.isValid(): exact;
            hdr.tags.t1.isValid(): exact;
            hdr.eth.dst[47:40]: ternary;
            hdr.eth.src & 0x00ff00ff00ff: exact;
            hdr.stack[1].etype: exact;
            meta.vrf: exact;
            meta.kind: exact;
        }
        actions = { set_port; outer; }
    }
    /* NoAction already listed: not listed twice */
    table listed { key = { meta.port: exact; } actions = { flag; NoAction; } }
    table frozen {
        key = { hdr.eth.etype: exact; }
        actions = { flag; }
        default_action = flag();
        const entries = { }
    }
    @name("sel") @max_group_size(16) @selector_size_semantics("sum_of_members") @max_member_weight(100)
    action_selector(HashAlgorithm.crc16, 32w64, 32w14) ecmp_sel;
    table ecmp {
        key = { meta.port: exact; hdr.eth.src: selector; }
        actions = { set_port; }
        implementation = ecmp_sel;
    }
    apply {
        by_key.apply();
        listed.apply();
        frozen.apply();
        ecmp.apply();
        bump(7);
        Acl.apply(hdr, meta);
        if (false) { never(); }
        exit;
        late();
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
@platform_property(multicast_group_table_size = 64)
V1Switch(P(), V(), Ing(), E(), C(), D()) main;
