// More constructs: keyless table, @name on a table and an action, @defaultonly, lpm const
// entries (longest prefix wins, not order), a checksum over a varbit field and with the
// payload (verify_checksum_with_payload), header union setValid, a stack indexed at run
// time, log_msg and assert, and a table applied on the right of && (short circuit).
#include <core.p4>
#include <v1model.p4>

header opt_t { bit<8> len; bit<16> csum; varbit<32> data; }
header h_t { bit<8> op; bit<8> k; bit<8> r1; bit<8> r2; bit<8> r3; }
header a_t { bit<8> v; }
header b_t { bit<16> v; }
header_union ab_t { a_t a; b_t b; }
header s_t { bit<8> v; }
struct headers { h_t h; opt_t opt; ab_t ab; s_t[3] st; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.op) {
            1: parse_opt;
            default: accept;
        }
    }
    state parse_opt {
        pkt.extract(hdr.opt, (bit<32>)(pkt.lookahead<bit<8>>()) * 8);
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) {
    apply {
        verify_checksum_with_payload(hdr.opt.isValid(), { hdr.opt.len, hdr.opt.data },
                                     hdr.opt.csum, HashAlgorithm.csum16);
    }
}

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    @name("renamed_set") action set_r1(bit<8> v) { hdr.h.r1 = v; }
    action set_r2(bit<8> v) { hdr.h.r2 = v; }
    action dflt() { hdr.h.r3 = 0xDF; }
    action touch() { hdr.h.r2 = 0x99; }
    table tcheck {
        key = { hdr.h.k: exact; }
        actions = { touch; }
        default_action = touch();
    }
    table vk {
        key = { hdr.ab.a.isValid(): exact; }
        actions = { touch; NoAction; }
        default_action = NoAction();
    }
    table keyless {
        actions = { dflt; }
        default_action = dflt();
    }
    @name("lpm_table") table lpm_t {
        key = { hdr.h.k: lpm; }
        actions = { set_r1; @defaultonly set_r2; }
        const entries = {
            0x00 &&& 0x80 : set_r1(1);
            0x40 &&& 0xC0 : set_r1(2);
            0x44 &&& 0xFF : set_r1(3);
        }
        default_action = set_r2(0xEE);
    }
    apply {
        sm.egress_spec = 1;
        keyless.apply();
        lpm_t.apply();
        if (sm.checksum_error == 1) {
            hdr.h.r2 = 0xCE;
        }
        log_msg("k={}", { hdr.h.k });
        assert(hdr.h.isValid());
        if (hdr.h.op == 4 && tcheck.apply().hit) {
            hdr.h.r3 = 0x44;      // tcheck runs only for op 4 (short circuit)
        }
        if (hdr.h.op == 2) {
            hdr.ab.b.setValid();
            hdr.ab.b.v = 0xBBBB;
            hdr.ab.a.setValid();      // makes b invalid
            hdr.ab.a.v = 0xAA;
            vk.apply();
        }
        if (hdr.h.op == 3) {
            bit<2> i = (bit<2>)hdr.h.k;
            hdr.st[0].setValid();
            hdr.st[1].setValid();
            hdr.st[2].setValid();
            hdr.st[i].v = 0x77;
        }
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.h); pkt.emit(hdr.opt); pkt.emit(hdr.ab); pkt.emit(hdr.st); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
